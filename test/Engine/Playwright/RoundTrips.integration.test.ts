/**
 * What one act on an element already read costs the page: the commands the engine sends the page's session, counted on
 * the wire between the engine and the browser, and how many of them wait on the answer to another (the round trips one
 * after another that an act's time is made of), while every act still reads back from the page what the control shows.
 */
import { createConnection, createServer, type Socket } from "node:net"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as Session from "../../../src/Cdp/Session.ts"
import { BrowserSession } from "../../../src/Engine/BrowserSession.ts"
import { Engine } from "../../../src/Engine/Engine.ts"
import { said } from "../../../src/Engine/Instruction.ts"
import * as PlaywrightEngine from "../../../src/Engine/PlaywrightEngine.ts"
import * as TestBrowser from "../../support/TestBrowser.ts"
import type { WebPattern } from "../../Web/Pattern.ts"
import * as Server from "../../Web/Server.ts"

const form: WebPattern = {
  name: "signup",
  class: "widgets",
  pages: {
    "/index.html": `<!doctype html><html lang="en"><title>Sign up</title>
<h1>Create your account</h1>
<label for="name">Full name</label><input id="name">
<label for="plan">Plan</label>
<select id="plan"><option value="">Choose a plan</option><option value="free">Free</option><option value="pro">Pro</option></select>
<label><input id="terms" type="checkbox"> I agree to the terms</label>
<button onclick="document.getElementById('status').textContent = 'Saved for ' + document.getElementById('name').value">Save</button>
<p id="status" role="status"></p>
`
  },
  run: async () => undefined
}

/** The messages sent one way over a WebSocket (a client's masked frames, or a server's), read as they pass. */
const commandsIn = (onCommand: (text: string) => void) => {
  let buffer = Buffer.alloc(0)
  return (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk])
    for (;;) {
      if (buffer.length < 2) return
      let length = buffer[1]! & 0x7f
      let at = 2
      if (length === 126) {
        if (buffer.length < 4) return
        length = buffer.readUInt16BE(2)
        at = 4
      } else if (length === 127) {
        if (buffer.length < 10) return
        length = Number(buffer.readBigUInt64BE(2))
        at = 10
      }
      const masked = (buffer[1]! & 0x80) !== 0
      const start = at + (masked ? 4 : 0)
      if (buffer.length < start + length) return
      const payload = Buffer.from(buffer.subarray(start, start + length))
      if (masked) for (let i = 0; i < payload.length; i++) payload[i]! ^= buffer[at + (i % 4)]!
      if ((buffer[0]! & 0x0f) === 1) onCommand(payload.toString("utf8"))
      buffer = buffer.subarray(start + length)
    }
  }
}

/** The commands counted so far that went to a page's session (not the browser's own bookkeeping). */
class Wire extends Context.Service<
  Wire,
  {
    readonly pageCommands: () => number
    /** Of those, the accessibility snapshots taken (the page's elements read whole). */
    readonly snapshots: () => number
    /** The longest chain of page commands so far each sent after the answer to the one before it. */
    readonly chain: () => number
    /** The longest such chain whose last answer has come. */
    readonly answered: () => number
  }
>()("test/Wire") {}

/** The page commands `act` costs, and what it answered: counted once the wire has been quiet a while (the element's
 * release is sent as an act ends, not waited for, and a loaded machine may send it well after the answer). */
const costOn =
  (wire: Wire["Service"]) =>
  <A, E, R>(act: Effect.Effect<A, E, R>) =>
    Effect.gen(function* () {
      const before = wire.pageCommands()
      const snapshotsBefore = wire.snapshots()
      const from = wire.answered()
      const answer = yield* act
      // Round trips one after another until the answer (the element's release, sent after it, not counted).
      const inTurn = wire.chain() - from
      let seen = wire.pageCommands()
      for (let quiet = 0, round = 0; quiet < 3 && round < 30; round++) {
        yield* Effect.sleep("100 millis")
        const now = wire.pageCommands()
        quiet = now === seen ? quiet + 1 : 0
        seen = now
      }
      return Object.assign(seen - before, { answer, snapshots: wire.snapshots() - snapshotsBefore, inTurn })
    })

/** The browser reached through a relay on 127.0.0.1 that counts the page commands the engine sends. */
const counted = Layer.effectContext(
  Effect.gen(function* () {
    const session = yield* BrowserSession
    const target = new URL(session.wsEndpoint)
    let commands = 0
    let snapshots = 0
    // Each page command's place in a chain: one more than the longest chain answered when it was sent.
    const depths = new Map<number, number>()
    let chain = 0
    let answered = 0
    const open = new Set<Socket>()
    const relay = createServer((client) => {
      const browser = createConnection({ port: Number(target.port), host: target.hostname })
      open.add(client).add(browser)
      for (const socket of [client, browser]) socket.on("error", () => socket.destroy())
      let head = true
      const count = commandsIn((text) => {
        if (!text.includes('"sessionId"')) return
        commands++
        if (text.includes("ariaSnapshot")) snapshots++
        const depth = answered + 1
        depths.set((JSON.parse(text) as { id: number }).id, depth)
        chain = Math.max(chain, depth)
      })
      const answers = commandsIn((text) => {
        const message = JSON.parse(text) as { id?: number }
        const depth = message.id === undefined ? undefined : depths.get(message.id)
        if (depth === undefined) return
        depths.delete(message.id!)
        answered = Math.max(answered, depth)
      })
      client.on("data", (chunk: Buffer) => {
        browser.write(chunk)
        if (!head) return count(chunk)
        const end = chunk.indexOf("\r\n\r\n")
        if (end >= 0) {
          head = false
          count(chunk.subarray(end + 4))
        }
      })
      // The browser's answers, after its upgrade response's head.
      let answerHead = true
      browser.on("data", (chunk: Buffer) => {
        client.write(chunk)
        if (!answerHead) return answers(chunk)
        const end = chunk.indexOf("\r\n\r\n")
        if (end >= 0) {
          answerHead = false
          answers(chunk.subarray(end + 4))
        }
      })
    })
    const port = yield* Effect.acquireRelease(
      Effect.promise(
        () =>
          new Promise<number>((resolve) =>
            relay.listen(0, "127.0.0.1", () => resolve((relay.address() as { port: number }).port))
          )
      ),
      () =>
        Effect.sync(() => {
          relay.close()
          for (const socket of open) socket.destroy()
        })
    )
    return Context.make(BrowserSession, {
      ...session,
      wsEndpoint: `ws://127.0.0.1:${port}${target.pathname}`
    }).pipe(
      Context.add(Wire, {
        pageCommands: () => commands,
        snapshots: () => snapshots,
        chain: () => chain,
        answered: () => answered
      })
    )
  })
)

layer(Layer.mergeAll(counted.pipe(Layer.provideMerge(TestBrowser.layer())), Server.Pages.layer([form])), {
  excludeTestServices: true,
  timeout: "90 seconds"
})("an act on an element already read", (it) => {
  it.layer(PlaywrightEngine.layer({ elementWaitMs: 500, actionTimeoutMs: 6_000 }))("playwright", (it) => {
    it.effect(
      "fills in eight page commands (six in turn), selects in four (two in turn) and checks in ten (six in turn), and the page shows each",
      () =>
        Effect.gen(function* () {
          const server = yield* Server.Pages
          const engine = yield* Engine
          const wire = yield* Wire
          yield* engine.navigate(server.url("signup", "/index.html"))
          const elements = yield* engine.elements!()
          const ref = (name: string) => elements.find((e) => e.name === name)!.ref
          const costOf = costOn(wire)
          const fillCost = yield* costOf(
            engine.act({ selector: ref("Full name"), method: "fill", arguments: ["Grace Hopper"], description: "" })
          )
          const fill = Number(fillCost)
          const selectCost = yield* costOf(
            engine.act({ selector: ref("Plan"), method: "selectOption", arguments: ["Pro"], description: "" })
          )
          const select = Number(selectCost)
          const checkCost = yield* costOf(
            engine.act({ selector: ref("I agree to the terms"), method: "check", arguments: [], description: "" })
          )
          const check = Number(checkCost)
          // What the page shows, read over a connection of its own (the page posts nothing: no request of its own
          // adds to what an act waits for).
          const session = yield* BrowserSession
          const shown = yield* Session.evaluate(
            session.wsEndpoint,
            session.targetId,
            `({ name: document.getElementById("name").value, plan: document.getElementById("plan").value,
            terms: document.getElementById("terms").checked })`
          )
          const expected = { name: "Grace Hopper", plan: "pro", terms: true }
          assert.deepInclude(shown, expected)
          assert.deepStrictEqual(
            { fill: Math.min(fill, 8), select: Math.min(select, 4), check: Math.min(check, 10) },
            { fill, select, check },
            `page commands per act: fill ${fill}, select ${select}, check ${check}`
          )
          // Of those, one after another (each sent once the one before it answered): the reference's count goes out with
          // the element's marking, and a select is read, chosen from and read back in one.
          const inTurn = { fill: fillCost.inTurn, select: selectCost.inTurn, check: checkCost.inTurn }
          assert.deepStrictEqual(
            { fill: Math.min(inTurn.fill, 6), select: Math.min(inTurn.select, 2), check: Math.min(inTurn.check, 6) },
            inTurn,
            `round trips one after another per act: fill ${inTurn.fill}, select ${inTurn.select}, check ${inTurn.check}`
          )
        })
    )

    it.effect(
      "a sentence act a moment after the page loaded, and a read a moment after a click, find its elements read ahead",
      () =>
        Effect.gen(function* () {
          const server = yield* Server.Pages
          const engine = yield* Engine
          const costOf = costOn(yield* Wire)
          // Each call comes once the page has been quiet a while, as an agent's next call comes after it thinks.
          yield* costOf(engine.navigate(server.url("signup", "/index.html")))
          const fill = yield* costOf(engine.act(said('fill "Full name" with "Ada Lovelace"')))
          yield* costOf(engine.act(said('click "Save"')))
          const read = yield* costOf(engine.extract("the status"))
          // What the page shows, as the answers said it: the read ahead is of the page after the click.
          assert.include(JSON.stringify(read.answer), "Saved for Ada Lovelace")
          assert.include(JSON.stringify(fill.answer), "Ada Lovelace")
          const session = yield* BrowserSession
          const shown = yield* Session.evaluate(
            session.wsEndpoint,
            session.targetId,
            `document.getElementById("name").value`
          )
          assert.strictEqual(shown, "Ada Lovelace")
          // The page's elements are not read whole again in either call: a check that they stand, then the act (or the
          // page's facts).
          const cost = {
            fill: { commands: Number(fill), snapshots: fill.snapshots },
            read: { commands: Number(read), snapshots: read.snapshots }
          }
          assert.deepStrictEqual(
            {
              fill: { commands: Math.min(cost.fill.commands, 10), snapshots: 0 },
              read: { commands: Math.min(cost.read.commands, 2), snapshots: 0 }
            },
            cost
          )
        })
    )
  })
})
