/**
 * Full-page screenshots a model accepts: a 20,000 px tall page comes back within 8,000 px a side and 5 MB, and the
 * answer says how it was scaled or clipped; a page that fits comes back as it is.
 */
import assert from "node:assert/strict"
import { type Agent, pattern, recordScript } from "../Pattern.ts"

/** A PNG's size from its IHDR chunk. */
const pngSize = (base64: string) => {
  const png = Buffer.from(base64, "base64")
  assert.equal(png.subarray(1, 4).toString("latin1"), "PNG", "the image is a PNG")
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20), bytes: png.length }
}

/** A page `height` px tall with a band of text every 500 px, which reports its own size once laid out. */
const tallPage = (height: number) => `<!doctype html><title>Release notes</title>${recordScript}
<style>body{margin:0}.band{height:500px;box-sizing:border-box;border-bottom:1px solid #ccc;padding:20px;font:20px sans-serif}
.band:nth-child(odd){background:#f3f6fb}</style>
<div id="bands">${Array.from({ length: height / 500 }, (_, i) => `<div class="band">Release ${i + 1}: fixes and improvements, section ${i + 1} of ${height / 500}</div>`).join("")}</div>
<script>
addEventListener("load", () => record({ size: { width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight } }))
</script>`

const reportedSize = async (agent: Agent) => {
  await agent.settle()
  const size = agent.recorded().find((r) => "size" in r)?.size as { width: number; height: number } | undefined
  assert.ok(size, "the page reported its size")
  return size
}

export const patterns = [
  pattern({
    name: "full-page-screenshot-tall-and-short",
    class: "screenshots",
    pages: { "/tall.html": tallPage(20_000), "/short.html": tallPage(2_000) },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/short.html") })
      const short = await reportedSize(agent)
      const fits = await agent.ok("browser.screenshot", { fullPage: true })
      const fitsPng = pngSize(fits.result.data)
      agent.expectPage(
        { width: short.width, height: short.height },
        { width: fitsPng.width, height: fitsPng.height },
        "a page that fits comes back at its own size"
      )
      assert.equal(fits.result.scaled, undefined, "nothing to scale")

      await agent.ok("browser.navigate", { url: agent.url("/tall.html") })
      const tall = (await reportedSize(agent)) as { width: number; height: number }
      const shot = await agent.ok("browser.screenshot", { fullPage: true })
      const png = pngSize(shot.result.data)
      assert.ok(png.width <= 8000 && png.height <= 8000, `within 8,000 px a side: ${png.width}×${png.height}`)
      assert.ok(png.bytes <= 5 * 1024 * 1024, `within 5 MB: ${png.bytes} bytes`)
      const { scaled, clipped } = shot.result as { scaled?: Record<string, any>; clipped?: Record<string, any> }
      assert.ok(scaled !== undefined || clipped !== undefined, "the answer says the image was scaled or clipped")
      if (scaled !== undefined) {
        agent.expectPage(tall, scaled.from, "the page's size as the answer gives it")
        agent.expectPage({ width: png.width, height: png.height }, scaled.to, "the image's size as the answer gives it")
      }
    }
  })
]
