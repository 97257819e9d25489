/** Which starts the entry reads as `serve`, and what the early browser makes of their flags, before the command line loads. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import * as ServeArgs from "../../src/Main/ServeArgs.ts"
import { optionsFor } from "../../src/Sandbox/Provider/EarlyBrowser.ts"
import { setpriv } from "../../src/Sandbox/Provider/LocalChromium/Sandboxing.ts"

describe("ServeArgs.flags", () => {
  it("names the flags of `serve` or no command, with or without their values", () => {
    assert.deepStrictEqual([...(ServeArgs.flags([]) ?? ["?"])], [])
    assert.deepStrictEqual(
      [...(ServeArgs.flags(["serve", "--jsonrpc", "--log-dir", "/tmp/x", "--max-browsers=2", "--port", "0"]) ?? [])],
      ["--jsonrpc", "--log-dir", "--max-browsers", "--port"]
    )
    // A flag's value is never read as a flag or a command.
    assert.deepStrictEqual([...(ServeArgs.flags(["--config", "status"]) ?? [])], ["--config"])
  })

  it("is undefined for another command or a flag `serve` does not take", () => {
    for (const argv of [["status"], ["demo"], ["--help"], ["--version"], ["serve", "--nope"], ["apply", "--jsonrpc"]])
      assert.isUndefined(ServeArgs.flags(argv), argv.join(" "))
  })
})

describe.runIf(setpriv !== undefined)("EarlyBrowser.optionsFor", () => {
  const options = (argv: ReadonlyArray<string>, env: Record<string, string> = {}) =>
    optionsFor(ServeArgs.flags(argv), env)

  it("starts a browser for a `serve` whose flags leave the browser as configured", () => {
    for (const argv of [[], ["serve"], ["--jsonrpc"], ["serve", "--http", "--port", "0", "--log-dir=/tmp/x"]])
      assert.isDefined(options(argv), argv.join(" "))
  })

  it("starts none for another command, flags that change the browser, or a configuration that keeps none warm", () => {
    for (const argv of [["status"], ["serve", "--headed"], ["--config", "c.json"], ["serve", "--runner", "a"]])
      assert.isUndefined(options(argv), argv.join(" "))
    for (const env of [
      { SWITCHYARD_WARM_BROWSERS: "0" },
      { SWITCHYARD_HUMAN: "on" },
      { SWITCHYARD_BROWSER: "cdp" },
      { DATABASE_URL: "postgres://127.0.0.1/x" }
    ])
      assert.isUndefined(options([], env), JSON.stringify(env))
  })

  it("reads takeover from the configuration file, the environment's word first", () => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-early-config-"))
    const file = (name: string, json: unknown) => {
      const path = join(dir, name)
      writeFileSync(path, typeof json === "string" ? json : JSON.stringify(json))
      return path
    }
    const on = file("on.json", { human: { enabled: true } })
    assert.isUndefined(options([], { SWITCHYARD_CONFIG: on }))
    assert.isUndefined(options([], { SWITCHYARD_CONFIG: file("on-text.json", { human: { enabled: "on" } }) }))
    assert.isDefined(options([], { SWITCHYARD_CONFIG: on, SWITCHYARD_HUMAN: "off" }), "the environment overrides")
    assert.isDefined(options([], { SWITCHYARD_CONFIG: file("off.json", { human: { enabled: false } }) }))
    assert.isDefined(options([], { SWITCHYARD_CONFIG: file("bad.json", "{") }), "the service reports a bad file")
    assert.isDefined(options([], { SWITCHYARD_CONFIG: join(dir, "missing.json") }))
    rmSync(dir, { recursive: true, force: true })
  })
})
