/**
 * What the libraries inside the service print reaches its stderr only redacted. Stagehand logs to the console
 * whenever a call outlives the instance it ran on (an act stopped by its time limit, whose engine was closed), with
 * a fill's typed value and the page's URL in the lines' fields.
 */
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { redactPrinted } from "../../src/Logging/LibraryOutput.ts"
import { startService, stopServices } from "../support/Service.ts"
import { waitFor } from "../support/Wait.ts"

afterAll(stopServices)

const tag = () => Math.floor(Math.random() * 0xffffffff).toString(16)

describe("library output", () => {
  it.live(
    "Stagehand's console lines reach the service's stderr with the typed value and the URL's query redacted",
    () =>
      Effect.gen(function* () {
        const typed = `searchCanary${tag()}`
        const query = `queryCanary${tag()}`
        const service = startService({
          NODE_OPTIONS: `--import=${join(import.meta.dirname, "..", "fixtures", "StagehandChatter.ts")}`,
          STAGEHAND_CHATTER_TYPED: typed,
          STAGEHAND_CHATTER_URL: `http://127.0.0.1:9/forms.html?q=${query}`
        })
        const printed = yield* Effect.promise(() =>
          waitFor(() => /error performing method[\s\S]*args:/.test(service.stderr()), 30_000)
        )
        const stderr = service.stderr()
        assert.isTrue(printed, `Stagehand's lines never reached stderr: ${stderr}`)
        assert.notInclude(stderr, typed, "the typed value on stderr")
        assert.notInclude(stderr, query, "the URL's query on stderr")
        // What is not secret stays readable.
        assert.include(stderr, "performing understudy method")
        assert.include(stderr, "http://127.0.0.1:9/forms.html?q=")
        assert.include(stderr, "method: fill")
      }),
    60_000
  )

  it("a printed line that is not Stagehand's goes through the text rules", () => {
    const out = redactPrinted('retrying fill "Email" with "ada@example.com" at http://127.0.0.1/x?token=abc')
    assert.notInclude(out, "ada@example.com")
    assert.notInclude(out, "token=abc")
  })
})
