import { assert, describe, it } from "@effect/vitest"
import { errors } from "playwright-core"
import { toEngineError } from "../../../src/Engine/Playwright/Errors.ts"
import { Disabled } from "../../../src/Engine/Playwright/Pointer.ts"
import { VerificationFailed } from "../../../src/Errors/Page.ts"
import { toErrorInfo } from "../../../src/Errors.ts"

describe("Playwright errors", () => {
  it("a mapped playwright-core failure keeps it as cause; the wire form drops it", () => {
    const failure = new errors.TimeoutError("locator.click: Timeout 10000ms exceeded.\nCall log: secret-ish details")
    const error = toEngineError(failure, { action: "click #go", timeoutMs: 10_000, sideEffect: "possible" })
    assert.strictEqual(error._tag, "Timeout")
    assert.strictEqual(error.cause, failure)
    const info = toErrorInfo(error)
    assert.deepStrictEqual(info, {
      type: "timeout",
      message: error.message,
      retryable: true,
      engine: "playwright",
      action: "click #go",
      sideEffect: "possible"
    })
    assert.notProperty(info, "cause")
    assert.notInclude(JSON.stringify(info), "Call log")
  })

  it("every mapping keeps the cause: closed connection, bad selector, navigation, action", () => {
    const at = { action: "act", timeoutMs: 1_000, sideEffect: "none" as const }
    for (const [message, tag, url] of [
      ["Target page, context or browser has been closed", "CdpClosed", undefined],
      ["Unexpected token in selector", "InvalidInput", undefined],
      ["net::ERR_CONNECTION_REFUSED at http://127.0.0.1:1/", "NavigationFailed", "http://127.0.0.1:1/"],
      ["element is not visible", "ActionFailed", undefined]
    ] as const) {
      const failure = new Error(message)
      const error = toEngineError(failure, url === undefined ? at : { ...at, url })
      assert.strictEqual(error._tag, tag)
      assert.strictEqual(error.cause, failure)
      assert.notProperty(toErrorInfo(error), "cause")
    }
  })

  it("a verification failure carries what was asked, what the page shows and where the text went, on the wire", () => {
    const error = new VerificationFailed({
      engine: "playwright",
      action: "fill aria-ref=e4",
      expected: "ada@example.com",
      actual: "",
      landed: { ref: "e8", role: "textbox", name: "Newsletter email" },
      message: "the text went elsewhere"
    })
    assert.deepStrictEqual(toErrorInfo(error), {
      type: "verification_failed",
      message: "the text went elsewhere",
      retryable: false,
      engine: "playwright",
      action: "fill aria-ref=e4",
      sideEffect: "possible",
      expected: "ada@example.com",
      actual: "",
      landed: { ref: "e8", role: "textbox", name: "Newsletter email" }
    })
  })

  it("a disabled target is refused with nothing done, saying it is disabled", () => {
    const error = toEngineError(new Disabled('button "Submit"'), {
      action: "click e5",
      timeoutMs: 1_000,
      sideEffect: "possible"
    })
    assert.strictEqual(error._tag, "ActionFailed")
    assert.strictEqual("sideEffect" in error ? error.sideEffect : undefined, "none")
    assert.include(error.message, 'button "Submit" is disabled')
  })
})
