import { assert, describe, it } from "@effect/vitest"
import { errors } from "playwright-core"
import { toEngineError } from "../../../src/Engine/Playwright/Errors.ts"
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
})
