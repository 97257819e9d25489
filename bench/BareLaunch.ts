/**
 * The cold-start baseline, run as its own process: a bare playwright-core launch of the same Chromium and a goto.
 * Prints `ready` once the page has loaded, then closes the browser. Usage: node bench/BareLaunch.ts <chromium> <url>
 */
import { chromium } from "playwright-core"

const [executablePath, url] = process.argv.slice(2)
const browser = await chromium.launch({
  executablePath: executablePath!,
  args: ["--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"]
})
try {
  const page = await browser.newPage()
  await page.goto(url!, { waitUntil: "load" })
  process.stdout.write("ready\n")
} finally {
  await browser.close()
}
