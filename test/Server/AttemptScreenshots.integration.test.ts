/**
 * Attempt screenshots as a person debugging finds them, through the official MCP client on a real service: each
 * attempt's picture shows the page as that attempt left it, an attempt whose picture would equal an earlier one points
 * at it in its log instead of storing it again, and text typed into the page never shows in a stored picture.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import sharp from "sharp"
import { stdioClient } from "../support/McpClient.ts"
import { stopServices } from "../support/Service.ts"

afterEach(stopServices)

const secret = "WMWM8642"

/** A page whose colour says which it is and what was done on it, with a large text field at a known place; `busy`
 * keeps its main thread busy most of the time, so every script and frame it makes comes late. */
const page = (background: string, busy = false) => `<!doctype html><html><head><title>Colours</title><style>
  body { margin: 0; background: ${background} }
  button { position: absolute; left: 40px; top: 20px; font-size: 24px }
  label { position: absolute; left: 40px; top: 80px; font-size: 20px; color: #fff }
  #box { position: absolute; left: 40px; top: 120px; width: 640px; height: 96px; font: 64px monospace; background: #fff;
    color: #000; border: 0; outline: none; padding: 0 }
</style></head><body>
<button onclick="document.body.style.background = '#00aa00'">Make green</button>
<a href="/blue" target="_blank" style="position: absolute; left: 300px; top: 20px; color: #fff">Open blue</a>
<label for="box">Secret</label>
<input id="box" type="text">
<label for="colour" style="top: 240px">Colour</label>
<select id="colour" style="position: absolute; left: 200px; top: 240px"
  onchange="document.body.style.background = this.value; document.getElementById('advert').src = '/advert?' + Date.now()">
  <option value="#cc0000">Red</option><option value="#00aa00">Green</option>
</select>
<label for="go" style="top: 280px">Go to</label>
<select id="go" style="position: absolute; left: 200px; top: 280px" onchange="if (this.value) location.href = this.value">
  <option value="">Choose…</option><option value="/blue">Blue page</option>
</select>
<iframe id="advert" title="Advert" src="/advert" style="position: absolute; left: 40px; top: 330px; width: 120px; height: 40px; border: 0"></iframe>
${busy ? "<script>setInterval(() => { const t = performance.now(); while (performance.now() - t < 60) {} }, 70)</script>" : ""}
</body></html>`

/** The field's inside, a few pixels in from its edges: one colour when no text shows there. */
const field = { left: 48, top: 128, width: 624, height: 80 }

const site = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<ReturnType<typeof createServer>>((resolve) => {
        const server = createServer((req, res) => {
          res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
          if (req.url?.startsWith("/advert"))
            return void res.end("<body style='margin: 0; background: #ffd700'>Ad</body>")
          res.end(page(req.url === "/blue" ? "#0000cc" : "#cc0000", req.url === "/busy"))
        })
        server.listen(0, "127.0.0.1", () => resolve(server))
      })
  ),
  (server) => Effect.promise(() => new Promise<void>((done) => server.close(() => done())))
).pipe(Effect.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`))

interface Line {
  readonly event: string
  readonly ts: string
  readonly attemptId?: string
  readonly action?: string
  readonly outcome?: string
  readonly sameAs?: string
  readonly sameAsTrace?: string
  readonly file?: string
}

/** Each call's trace directory and lines, in the order the calls were made. */
const traces = (root: string) => {
  const day = join(root, "browser-automation")
  return readdirSync(day)
    .flatMap((date) => readdirSync(join(day, date)).map((id) => ({ id, dir: join(day, date, id) })))
    .map(({ id, dir }) => ({
      id,
      dir,
      lines: readFileSync(join(dir, "attempt.jsonl"), "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as Line),
      pngs: existsSync(join(dir, "artifacts"))
        ? readdirSync(join(dir, "artifacts"))
            .filter((f) => f.endsWith(".png"))
            .map((f) => join(dir, "artifacts", f))
        : []
    }))
    .sort((a, b) => a.lines[0]!.ts.localeCompare(b.lines[0]!.ts))
}

/** The statistics of a part of a picture (sharp's `stats` reads its input: the part is cut out first). */
const statsOf = async (png: Uint8Array, part: { left: number; top: number; width: number; height: number }) =>
  sharp(await sharp(png).extract(part).png().toBuffer()).stats()

/** The page's background colour in a corner of the picture, by its strongest channel. */
const background = async (png: Uint8Array) => {
  const stats = await statsOf(png, { left: 700, top: 300, width: 40, height: 40 })
  const [r, g, b] = stats.channels.map((c) => c.mean)
  return r! > 2 * Math.max(g!, b!)
    ? "red"
    : g! > 2 * Math.max(r!, b!)
      ? "green"
      : b! > 2 * Math.max(r!, g!)
        ? "blue"
        : "?"
}

/** Whether anything but one flat colour shows inside the field (text, a caret). */
const marked = async (png: Uint8Array) => {
  const stats = await statsOf(png, field)
  return stats.channels.slice(0, 3).some((c) => c.stdev > 0)
}

/** A service over stdio with the replay level on, its logs and store in the test's own directories. */
const service = Effect.gen(function* () {
  const logs = mkdtempSync(join(tmpdir(), "switchyard-shots-"))
  const client = yield* stdioClient({
    SWITCHYARD_LOG_DIR: logs,
    SWITCHYARD_REPLAY: "on",
    SWITCHYARD_STORE: join(mkdtempSync(join(tmpdir(), "switchyard-shots-store-")), "store.db"),
    DATABASE_URL: "",
    SWITCHYARD_DATABASE_URL: ""
  })
  const call = (name: string, args: Record<string, unknown>) =>
    Effect.promise(async () => {
      const result = (await client.callTool({ name, arguments: args })) as {
        isError?: boolean
        content: ReadonlyArray<{ type: string; data?: string; text?: string }>
      }
      assert.notStrictEqual(result.isError, true, JSON.stringify(result.content).slice(0, 400))
      return result
    })
  return { logs, call, close: Effect.promise(() => client.close()) }
})

describe("attempt screenshots", () => {
  it.live(
    "each shows its attempt's page, an equal one is pointed at, typed text never shows",
    () =>
      Effect.gen(function* () {
        const url = yield* site
        const { logs, call, close } = yield* service
        const red = `${url}/red`
        // Learnt once (the cascade resolves the sentences), then replayed: a replayed act stores no picture itself.
        yield* call("browser_navigate", { url: red })
        yield* call("browser_act", { instruction: `fill "Secret" with "${secret}"` })
        yield* call("browser_act", { instruction: 'click "Make green"' })
        yield* call("browser_navigate", { url: red })
        yield* call("browser_act", { instruction: `fill "Secret" with "${secret}"` })
        yield* call("browser_act", { instruction: 'click "Make green"' })
        yield* call("browser_extract", { instruction: "the page" })
        const shot = yield* call("browser_screenshot", {})
        yield* call("browser_navigate", { url: `${url}/blue` })
        yield* call("browser_extract", { instruction: "the page" })
        yield* close

        const image = Buffer.from(shot.content.find((c) => c.type === "image")!.data!, "base64")
        assert.strictEqual(yield* Effect.promise(() => background(image)), "green")
        assert.isTrue(yield* Effect.promise(() => marked(image)), "the agent's own screenshot shows the typed text")

        const calls = traces(logs)
        assert.strictEqual(calls.length, 10)
        const [, , , , , click, extract, screenshot, navigateBlue, extractBlue] = calls
        assert.isTrue(
          click!.lines.some((l) => l.event === "replay" && l.outcome === "hit"),
          "the second click is replayed"
        )
        assert.deepStrictEqual(click!.pngs, [])

        // The read after the replayed click: its picture was taken after the agent's screenshot, before the navigate,
        // and shows the page as the read left it (green, not the blue page after).
        assert.strictEqual(extract!.pngs.length, 1)
        const extracted = readFileSync(extract!.pngs[0]!)
        assert.strictEqual(yield* Effect.promise(() => background(extracted)), "green")

        // The screenshot call's attempt saw the same page: its log points at the read's picture.
        assert.deepStrictEqual(screenshot!.pngs, [])
        const pointer = screenshot!.lines.find((l) => l.event === "screenshot_shared")
        const readAttempt = extract!.lines.find((l) => l.event === "start")!.attemptId
        assert.strictEqual(pointer?.sameAs, readAttempt)
        assert.strictEqual(pointer?.sameAsTrace, extract!.id)
        assert.isTrue(existsSync(join(extract!.dir, pointer!.file!)))

        // The read on the blue page points at the navigate's picture, which is blue.
        const blue = extractBlue!.lines.find((l) => l.event === "screenshot_shared")
        assert.deepStrictEqual(extractBlue!.pngs, [])
        assert.strictEqual(blue?.sameAsTrace, navigateBlue!.id)
        const navigated = readFileSync(join(navigateBlue!.dir, blue!.file!))
        assert.strictEqual(yield* Effect.promise(() => background(navigated)), "blue")

        // No stored picture shows what was typed.
        const stored = calls.flatMap((c) => c.pngs)
        assert.isAtLeast(stored.length, 5)
        for (const file of stored) {
          assert.isFalse(yield* Effect.promise(() => marked(readFileSync(file))), `${file} shows the typed text`)
        }
      }),
    120_000
  )

  it.live(
    "a choice after typing shares its picture, unless it loaded another page: the typing's picture is then told lost",
    () =>
      Effect.gen(function* () {
        const url = yield* site
        const { logs, call, close } = yield* service
        yield* call("browser_navigate", { url: `${url}/red` })
        yield* call("browser_act", { instruction: `fill "Secret" with "${secret}"` })
        // The page's own handler turns it green and reloads the advert in its frame; the page itself does not load.
        yield* call("browser_act", { instruction: 'select "Green" in "Colour"' })
        yield* Effect.sleep("300 millis")
        // Typed, not filled: the replay level would answer the same fill again with no attempt of its own.
        yield* call("browser_act", { instruction: 'type " again" into "Secret"' })
        // A jump menu: the choice loads the blue page.
        const jumped = yield* call("browser_act", { instruction: 'select "Blue page" in "Go to"' })
        yield* close
        assert.include(jumped.content.map((c) => c.text ?? "").join("\n"), "/blue")

        const calls = traces(logs)
        assert.strictEqual(calls.length, 5)
        const [navigate, fill, choose, refill, jump] = calls
        const attemptOf = (trace: (typeof calls)[number]) => trace.lines.find((l) => l.event === "start")!.attemptId
        /** The trace that stores an attempt's picture: its own, or the one its `screenshot_shared` line names. */
        const pictureOf = (trace: (typeof calls)[number]) => {
          if (trace.pngs.length === 1) return trace
          const shared = trace.lines.find((l) => l.event === "screenshot_shared")
          return calls.find((c) => attemptOf(c) === shared?.sameAs)
        }
        // The choice took no picture of its own: the one taken after it serves the fill before it too (and the load
        // before that, unless a slow pause let the load's be taken first). It is green, the typed text masked.
        assert.deepStrictEqual(choose!.pngs, [])
        const shared = pictureOf(choose!)
        assert.include([navigate!.id, fill!.id], shared?.id)
        assert.strictEqual(pictureOf(fill!)?.id, shared?.id)
        const chosen = readFileSync(shared!.pngs[0]!)
        assert.strictEqual(yield* Effect.promise(() => background(chosen)), "green")
        assert.isFalse(yield* Effect.promise(() => marked(chosen)), "the shared picture shows the typed text")
        // The jump's own picture shows where it went. The typing before it never has the blue page for its picture:
        // when the jump came before the typing's picture was taken (at once, as here), its log says it was lost.
        assert.strictEqual(jump!.pngs.length, 1)
        assert.strictEqual(yield* Effect.promise(() => background(readFileSync(jump!.pngs[0]!))), "blue")
        const typed = pictureOf(refill!)
        if (typed === undefined) {
          const lost = refill!.lines.find((l) => l.event === "screenshot_lost") as
            | (Line & { reason?: string })
            | undefined
          assert.include(lost?.reason ?? "", "loaded another page")
        } else {
          assert.strictEqual(yield* Effect.promise(() => background(readFileSync(typed.pngs[0]!))), "green")
        }
      }),
    120_000
  )

  it.live(
    "a screenshot while the read's picture is being taken of a slow page: the agent's shows the text, the stored one not",
    () =>
      Effect.gen(function* () {
        const url = yield* site
        const { logs, call, close } = yield* service
        yield* call("browser_navigate", { url: `${url}/busy` })
        yield* call("browser_act", { instruction: `fill "Secret" with "${secret}"` })
        yield* call("browser_extract", { instruction: "the page" })
        // Past the time a read's frame is held: its capture is under way (slow on this page) when the screenshot comes,
        // and is cut for it or waited for.
        yield* Effect.sleep("150 millis")
        const first = yield* call("browser_screenshot", {})
        const second = yield* call("browser_screenshot", {})
        yield* close

        for (const shot of [first, second]) {
          const image = Buffer.from(shot.content.find((c) => c.type === "image")!.data!, "base64")
          assert.isTrue(yield* Effect.promise(() => marked(image)), "the agent's screenshot shows the typed text")
        }
        const calls = traces(logs)
        const [navigate, fill, extract] = calls
        const stored = calls.flatMap((c) => c.pngs)
        assert.isAtLeast(stored.length, 1)
        // The fill's and the read's attempts: one picture of the page after the fill, stored once, unless the
        // navigate's (held a moment on this slow page) serves them.
        assert.isAtMost([...fill!.pngs, ...extract!.pngs].length, 1)
        assert.include([1, 2], [...navigate!.pngs, ...fill!.pngs, ...extract!.pngs].length)
        for (const file of stored) {
          assert.isFalse(yield* Effect.promise(() => marked(readFileSync(file))), `${file} shows the typed text`)
        }
      }),
    120_000
  )

  it.live(
    "a read's picture is of its tab, also when the next call switches to another tab",
    () =>
      Effect.gen(function* () {
        const url = yield* site
        const { logs, call, close } = yield* service
        const red = `${url}/red`
        yield* call("browser_navigate", { url: red })
        yield* call("browser_act", { instruction: 'click "Open blue"' })
        yield* call("browser_tabs", { action: "switch", tab: 0 })
        yield* call("browser_act", { instruction: 'click "Make green"' })
        yield* call("browser_navigate", { url: red })
        // Replayed: no picture of its own, the read after it has its picture held.
        yield* call("browser_act", { instruction: 'click "Make green"' })
        yield* call("browser_extract", { instruction: "the page" })
        yield* call("browser_tabs", { action: "switch", tab: 1 })
        yield* call("browser_extract", { instruction: "the page" })
        yield* close

        const calls = traces(logs)
        const [, , , , , click, extract] = calls
        assert.isTrue(click!.lines.some((l) => l.event === "replay" && l.outcome === "hit"))
        assert.strictEqual(extract!.pngs.length, 1)
        assert.strictEqual(yield* Effect.promise(() => background(readFileSync(extract!.pngs[0]!))), "green")
      }),
    120_000
  )
})
