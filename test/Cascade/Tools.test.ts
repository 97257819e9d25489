/**
 * The tool records as every surface reads them: which tools answer outside a session's lane, without opening a
 * session, close it, may leave it on another page or need its storage state; and the types a call named by a literal
 * gets from its record (checked by the compiler: a wrong argument or result type fails `tsc`).
 */
import { assert, describe, expectTypeOf, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { Router, ToolAnswer } from "../../src/Cascade/Router.ts"
import * as Tools from "../../src/Cascade/Tools.ts"
import type { Action, Engine } from "../../src/Engine/Engine.ts"
import { Said } from "../../src/Engine/Instruction.ts"
import { idleStatus } from "../../src/Sandbox/Sandbox.ts"

const named = (has: (tool: (typeof Tools.tools)[number]) => boolean) =>
  Tools.tools
    .filter(has)
    .map((tool) => tool.name)
    .sort()

describe("tool records", () => {
  it("say which tools take no turn, open no session, close it, move the page or skip the storage state", () => {
    assert.deepStrictEqual(
      named((t) => t.outsideLane),
      ["browser.close", "browser.handoff", "browser.resume", "browser.status"]
    )
    assert.deepStrictEqual(
      named((t) => t.whenNotOpen !== undefined),
      ["browser.close", "browser.status"]
    )
    assert.deepStrictEqual(Tools.tools.find((t) => t.name === "browser.status")?.whenNotOpen, idleStatus)
    assert.deepStrictEqual(
      named((t) => t.closesSession),
      ["browser.close"]
    )
    assert.deepStrictEqual(
      named((t) => t.changesPage),
      ["browser.act", "browser.navigate"]
    )
    assert.deepStrictEqual(
      named((t) => !t.needsStorageState),
      [
        "browser.close",
        "browser.console",
        "browser.dialog",
        "browser.handoff",
        "browser.network",
        "browser.resume",
        "browser.status",
        "browser.storage",
        "browser.tabs"
      ]
    )
    // Either spelling finds the same record.
    assert.isTrue(Option.exists(Tools.find("browser_close"), (t) => t.closesSession))
  })

  it("an act's or observe's instruction is parsed once, when its arguments are decoded, and logs as its words", () => {
    for (const name of ["browser.act", "browser.observe"]) {
      const tool = Tools.tools.find((t) => t.name === name)!
      const bound = Effect.runSync(tool.decode({ instruction: 'click "Submit"' }))
      const { instruction } = bound.args as { instruction: Said }
      assert.instanceOf(instruction, Said, name)
      assert.deepInclude(instruction.parsed, { _tag: "Success" })
      assert.strictEqual(JSON.stringify(bound.args), '{"instruction":"click \\"Submit\\""}')
    }
  })

  it("an engine takes only parsed words or an Action", () => {
    expectTypeOf<Parameters<Engine["Service"]["act"]>[0]>().toEqualTypeOf<Said | Action>()
    expectTypeOf<Parameters<Engine["Service"]["observe"]>[0]>().toEqualTypeOf<Said>()
    const typed = (engine: Engine["Service"]) => {
      // @ts-expect-error words reach an engine parsed, never as a plain string
      engine.act('click "Submit"')
      // @ts-expect-error words reach an engine parsed, never as a plain string
      engine.observe("the Submit button")
    }
    assert.isFunction(typed)
  })

  it("a call named by a literal takes its tool's arguments and answers with its result type", () => {
    const typed = (router: Router["Service"]) => {
      expectTypeOf(router.call("browser.navigate", { url: "https://example.test/" })).toEqualTypeOf<
        Effect.Effect<ToolAnswer<{ readonly url: string; readonly title: string; readonly status: number | null }>>
      >()
      // @ts-expect-error a navigate takes a url
      router.call("browser.navigate", { href: "https://example.test/" })
      expectTypeOf(router.call(String("browser.navigate"), 7)).toEqualTypeOf<Effect.Effect<ToolAnswer<unknown>>>()
    }
    assert.isFunction(typed)
  })
})
