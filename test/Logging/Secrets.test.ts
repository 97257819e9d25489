/** Secrets by reference as a table: references found, revealed only on request, values scrubbed and redacted. */
import { assert, describe, it } from "@effect/vitest"
import * as Redact from "../../src/Logging/Redact.ts"
import * as Secrets from "../../src/Logging/Secrets.ts"

describe("Secrets", () => {
  it("finds references, reveals them on request, and refuses a name nobody configured", () => {
    Secrets.register(
      Secrets.fromEnvironment({ SWITCHYARD_SECRET_Pin: "4711-pin", SWITCHYARD_SECRET_: "x", PATH: "/bin" })
    )
    assert.deepStrictEqual(Secrets.names(), ["PIN"])
    assert.deepStrictEqual(Secrets.referenced('fill "PIN" with "{{secret:pin}}"'), ["PIN"])
    assert.isTrue(Secrets.refersToSecret({ instruction: 'fill "PIN" with "{{ secret:PIN }}"' }))
    assert.isFalse(Secrets.refersToSecret({ instruction: 'fill "PIN" with "{secret:PIN}"' }))
    assert.strictEqual(Secrets.reveal("a {{secret:PIN}} b"), "a 4711-pin b")
    assert.throws(() => Secrets.reveal("{{secret:NOPE}}"), /SWITCHYARD_SECRET_NOPE/)
  })

  it("scrubs values back to their reference, deep, and the redactor masks them in logs", () => {
    Secrets.register({ PIN: "4711-pin", TOKEN: "tok-4711-pin-long" })
    assert.strictEqual(Secrets.scrub("your pin is 4711-pin"), "your pin is {{secret:PIN}}")
    // The longer value first, so a secret inside another does not leave part of it behind.
    assert.strictEqual(Secrets.scrub("tok-4711-pin-long"), "{{secret:TOKEN}}")
    assert.deepStrictEqual(Secrets.scrubDeep({ a: ["x 4711-pin"], n: 1 }), { a: ["x {{secret:PIN}}"], n: 1 })
    assert.strictEqual(Redact.defaultRedactor.text("page says 4711-pin"), "page says [redacted:secret]")
    assert.notInclude(JSON.stringify(Redact.defaultRedactor.value({ note: "4711-pin" })), "4711-pin")
    assert.notInclude(Redact.defaultRedactor.url("https://a.test/?q=x#4711-pin"), "4711-pin")
    Secrets.register({})
    assert.strictEqual(Secrets.scrub("4711-pin"), "4711-pin")
  })
})
