/**
 * A read's frame held, taken from the agent's own picture of the unchanged page on a real Chromium: the stored
 * picture hides every typed field (one in a frame of the page's origin too) under a box, the agent's keeps its text.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import sharp from "sharp"
import * as Session from "../../src/Cdp/Session.ts"
import { BrowserSession } from "../../src/Engine/BrowserSession.ts"
import * as Captures from "../../src/Sandbox/Captures.ts"
import * as Snapshot from "../../src/Sandbox/Snapshot.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import * as TestBrowser from "../support/TestBrowser.ts"

/** Parts of the page inside each field, a few pixels in from its edges. */
const topField = { left: 48, top: 48, width: 464, height: 48 }
const deepField = { left: 40 + 10 + 28, top: 200 + 10 + 38, width: 464, height: 48 }

/** Mean and spread of a part of a picture, per colour channel. */
const statsOf = (png: Uint8Array, part: typeof topField) =>
  Effect.promise(async () =>
    (await sharp(await sharp(png).extract(part).png().toBuffer()).stats()).channels.slice(0, 3)
  )
const flat = (png: Uint8Array, part: typeof topField) =>
  Effect.map(statsOf(png, part), (channels) => channels.every((c) => c.stdev === 0))

layer(TestBrowser.layer(), { excludeTestServices: true, timeout: 60_000 })(
  "Captures from the agent's picture",
  (it) => {
    it.effect("the stored frame masks the typed fields by their boxes; the agent's picture shows them", () =>
      Effect.gen(function* () {
        const session = yield* BrowserSession
        const site = yield* SiteServer.start
        const page = Session.fresh(session)
        yield* Session.navigate(session.wsEndpoint, session.targetId, site.url("/screens/typed.html"))
        yield* Session.evaluate(
          session.wsEndpoint,
          session.targetId,
          `(() => { document.getElementById("top").value = "WMWM8642"; document.getElementById("inner").contentDocument.getElementById("deep").value = "WMWM8642"; return true })()`
        )
        const shot = Snapshot.screenshot(page).pipe(Effect.map(Option.some), Effect.orElseSucceed(Option.none))
        let captured = 0
        const captures = yield* Captures.make(
          Effect.andThen(
            Effect.sync(() => captured++),
            shot
          ),
          {
            typed: Snapshot.typedBoxes(page).pipe(Effect.orElseSucceed(() => Option.none<Snapshot.Typed>())),
            mask: (png, typed) => Snapshot.maskBoxes(png, typed).pipe(Effect.option)
          }
        )
        const stored: Array<Uint8Array> = []
        const keep: Captures.Keep = {
          save: (image) => Effect.sync(() => void stored.push(image)),
          same: () => Effect.void,
          lost: () => Effect.void,
          where: { attemptId: "read", traceId: "trace", file: "artifacts/read.png" }
        }
        // A read ended on the page: its frame is held; the agent's screenshot comes next.
        yield* captures.begin
        yield* captures.ended
        yield* captures.start(keep)
        const agents = yield* captures.pixels(
          page((cdp, sessionId) =>
            cdp
              .send("Page.captureScreenshot", { format: "png" }, sessionId)
              .pipe(Effect.map((r) => new Uint8Array(Buffer.from(r.data, "base64"))))
          ),
          (png) => png
        )
        yield* captures.settled
        // The mask is made off the page, after the page may move on: stored a moment later.
        for (let i = 0; i < 200 && stored.length === 0; i++) yield* Effect.sleep("25 millis")

        assert.strictEqual(captured, 0, "no capture of its own")
        assert.strictEqual(stored.length, 1)
        const picture = stored[0]!
        for (const part of [topField, deepField]) {
          assert.isFalse(yield* flat(agents, part), "the agent's picture shows the typed text")
          assert.isTrue(yield* flat(picture, part), "the stored picture hides it")
        }
        // The rest of the page as it is: the red page and the frame's green.
        const [r, g] = yield* statsOf(picture, { left: 700, top: 40, width: 40, height: 40 })
        assert.isAbove(r!.mean, 150)
        assert.isBelow(g!.mean, 50)
        const [, green] = yield* statsOf(picture, { left: 60, top: 320, width: 40, height: 20 })
        assert.isAbove(green!.mean, 150)
      }).pipe(Effect.scoped)
    )
  }
)
