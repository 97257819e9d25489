/**
 * A careless client against the real service: seeded random runs over several sessions mixing valid calls, wrong
 * labels, bad arguments, unknown tools and sessions, pipelined bursts, cancellations, closes and a disconnect, on
 * pages that change. Each request is answered exactly once, calls on a session take effect in order, a valid call
 * after page-level failures succeeds on its first attempt, and nothing (browser, process, profile) outlives the run.
 * A failure names its seed: `SLOPPY_SEED=<seed>` replays it (`SLOPPY_TRACE=1` prints the steps as they run). Over
 * 350 lines because the generator, its model of each session and the checks read together as one property.
 */
import { existsSync, readFileSync } from "node:fs"
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { createInterface } from "node:readline"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Descendants from "../Chaos/Descendants.ts"
import * as Random from "../Chaos/Random.ts"
import * as SiteServer from "../fixtures/SiteServer.ts"
import { type Service, startService, stopServices } from "../support/Service.ts"
import { waitFor } from "../support/Wait.ts"

afterEach(stopServices)

type Answer = Record<string, unknown>
interface Failure {
  readonly code?: number
  readonly message?: string
  readonly data?: { readonly type?: string }
}
interface Outcome {
  readonly result?: {
    readonly result?: Record<string, unknown>
    readonly attemptId?: string
    readonly state?: { readonly url?: string | null }
  }
  readonly error?: Failure
}

/**
 * Loopback pages of our own: `/changing` is a sign-up form whose page keeps adding and removing buttons while it is
 * used, and `/never` is a navigation that never answers, so a cancel always finds it in flight.
 */
const ownSite = Effect.acquireRelease(
  Effect.promise(async () => {
    const held: Array<ServerResponse> = []
    let loads = 0
    const server = createServer((req, res) => {
      if (req.url?.startsWith("/never")) return void held.push(res)
      loads++
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Changing ${loads}</title></head><body>
<h1>Changing page, load ${loads}</h1>
<label for="email">Email</label><input id="email" name="email" type="email">
<div id="churn"></div>
<script>
  let n = 0
  setInterval(() => {
    const churn = document.getElementById("churn")
    if (churn.childElementCount > 3) churn.firstElementChild.remove()
    const b = document.createElement("button")
    b.textContent = "Ticker " + (++n)
    churn.appendChild(b)
  }, 40)
</script></body></html>`)
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    return { server, held, origin }
  }),
  ({ server, held }) =>
    Effect.promise(async () => {
      for (const res of held) res.destroy()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    })
)

/** The profile directories of the service's browsers, read from their command lines. */
const profilesOf = (pids: ReadonlyArray<number>) => {
  const found = new Set<string>()
  for (const pid of pids) {
    try {
      const match = /--user-data-dir=(\S+)/.exec(readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " "))
      if (match?.[1]) found.add(match[1])
    } catch {
      // exited meanwhile
    }
  }
  return found
}

const browserOf = (name: string) => /chrom/i.test(name)

interface Page {
  readonly url: string
  /** A form with an "Email" field on it. */
  readonly form: boolean
}

const run = async (seed: number, service: Service, fixtures: SiteServer.SiteServer, own: string) => {
  const random = Random.make(seed)
  const stdout: Array<string> = []
  createInterface({ input: service.child.stdout }).on("line", (line) => stdout.push(line.slice(0, 300)))
  const tracker = Descendants.tracker(service.child.pid ?? -1)
  const profiles = new Set<string>()
  const sample = () => {
    tracker.sample()
    for (const p of profilesOf(tracker.seen().map((s) => s.pid))) profiles.add(p)
  }
  const names = random.shuffle(["alpha", "beta", "gamma"]).slice(0, random.int(2, 3))
  /** Where each session's page is, as far as the calls answered so far say; absent when it has no browser. */
  const pages = new Map<string, Page | "unknown">()
  const pagesToVisit: ReadonlyArray<Page> = [
    { url: fixtures.url("/forms.html"), form: true },
    { url: `${own}/changing`, form: true },
    { url: fixtures.url("/plain.html"), form: false },
    { url: fixtures.url("/ambiguous.html"), form: false }
  ]
  let unique = 0
  let step = 0
  let failuresRun = 0
  const where = () => `seed ${seed}, step ${step}`
  const raw = (id: string, method: string, params: unknown) =>
    service.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }), id) as Promise<Outcome & Answer>
  let nextId = 0
  const fresh = () => `s${seed}-${++nextId}`
  const call = (method: string, params: unknown) => raw(fresh(), method, params)
  /** A call that is never answered fails the run with its name instead of hanging it. */
  const answered = <A>(pending: Promise<A>, what: string) =>
    Promise.race([
      pending,
      new Promise<never>((_, reject) =>
        setTimeout(
          () =>
            reject(
              new Error(
                `${where()}: ${what} got no answer in 20 s; its last lines: ${stdout.slice(-6).join("\n")}; the service said: ${service.stderr().slice(-3_000)}`
              )
            ),
          20_000
        ).unref()
      )
    ])
  const ok = (answer: Outcome, what: string) =>
    assert.isDefined(answer.result, `${where()}: ${what} should succeed: ${JSON.stringify(answer).slice(0, 800)}`)
  const pageFailure = (answer: Outcome, what: string) => {
    assert.strictEqual(answer.error?.code, -32000, `${where()}: ${what}: ${JSON.stringify(answer).slice(0, 800)}`)
    assert.notInclude(["invalid_input", "engine_cooling_down"], answer.error?.data?.type, `${where()}: ${what}`)
  }
  const invalid = (answer: Outcome, what: string) =>
    assert.isTrue(
      answer.error?.code === -32602 || answer.error?.data?.type === "invalid_input",
      `${where()}: ${what} should be refused as invalid: ${JSON.stringify(answer).slice(0, 800)}`
    )
  const fieldsOf = (answer: Outcome) =>
    (answer.result?.result?.fields ?? []) as ReadonlyArray<{ readonly label?: string; readonly value?: string }>
  /** Pipelined navigate, fill and extract on one session: the extract sees the fill, on the page navigated to. */
  const ordered = async (session: string) => {
    const page = random.pick(pagesToVisit.filter((p) => p.form))
    const email = `sloppy.${seed}.${++unique}@example.test`
    const [navigated, filled, extracted] = await Promise.all([
      call("browser.navigate", { url: page.url, session }),
      call("browser.act", { instruction: `fill "Email" with "${email}"`, session }),
      call("browser.extract", { instruction: "the form fields", session })
    ])
    ok(navigated!, "navigate")
    ok(filled!, `fill on ${session}`)
    ok(extracted!, `extract on ${session}`)
    assert.strictEqual(filled?.result?.state?.url, page.url, `${where()}: the fill ran on the page navigated to`)
    assert.strictEqual(extracted?.result?.result?.url, page.url, `${where()}: the extract ran on the page navigated to`)
    const field = fieldsOf(extracted!).find((f) => f.label === "Email")
    assert.strictEqual(field?.value, email, `${where()}: the extract on ${session} sees the fill before it`)
    pages.set(session, page)
  }
  const ensurePage = async (session: string) => {
    const known = pages.get(session)
    if (known !== undefined && known !== "unknown") return
    const page = random.pick(pagesToVisit)
    ok(await call("browser.navigate", { url: page.url, session }), "navigate")
    pages.set(session, page)
  }
  /** A run of wrong labels, then one valid call: it succeeds on its first attempt. */
  const failuresThenValid = async (session: string) => {
    await ensurePage(session)
    const count = random.int(1, 6)
    const wrong = () =>
      call("browser.act", {
        instruction: `click "${random.pick(["Nope", "Zorblax", "Quuxify", "Frobnicate"])}"`,
        session
      })
    const failures: Array<Outcome> = []
    if (random.chance(0.5)) failures.push(...(await Promise.all(Array.from({ length: count }, wrong))))
    else for (let i = 0; i < count; i++) failures.push(await wrong())
    for (const f of failures) pageFailure(f, "a click on a label that is not there")
    failuresRun += count
    const page = pages.get(session)
    const valid =
      page !== undefined && page !== "unknown" && page.form && random.chance(0.5)
        ? await call("browser.act", {
            instruction: `fill "Email" with "after.${seed}.${++unique}@example.test"`,
            session
          })
        : await call("browser.extract", { instruction: "the page", session })
    ok(valid, `a valid call after ${count} page-level failures`)
    assert.match(String(valid.result?.attemptId), /#1$/, `${where()}: first attempt: ${valid.result?.attemptId}`)
  }
  /** Lines a sloppy client writes in one go, each with what it must be answered with. */
  const junk = (): Array<[Promise<Outcome>, (a: Outcome) => void]> => {
    const session = random.pick(names)
    const ghost = `ghost-${seed}-${++unique}`
    const menu: Array<() => [Promise<Outcome>, (a: Outcome) => void]> = [
      () => [call("browser.act", { session }), (a) => invalid(a, "act without an instruction")],
      () => [call("browser.act", { instruction: 42, session }), (a) => invalid(a, "act with a number")],
      () => [call("browser.navigate", { url: ["x"], session }), (a) => invalid(a, "navigate to an array")],
      () => [
        call(random.pick(["browser.teleport", "browser_fly", "browserReboot"]), { session }),
        (a) => assert.strictEqual(a.error?.code, -32601, `${where()}: unknown tool: ${JSON.stringify(a)}`)
      ],
      () => [
        call("browserStatus", { session: ghost }),
        (a) =>
          assert.strictEqual(
            (a.result as { active?: boolean } | undefined)?.active,
            false,
            `${where()}: ${JSON.stringify(a)}`
          )
      ],
      () => [call("browserClose", { session: ghost }), (a) => ok(a, "close of a session never opened")],
      () => [
        call(random.pick(["browserStatus", "browserClose", "browser.status"]), {
          session: random.pick<unknown>([7, true, { name: "alpha" }, ["beta"]])
        }),
        (a) => invalid(a, "a session name that is not a string")
      ]
    ]
    return Array.from({ length: random.int(3, 7) }, () => random.pick(menu)())
  }
  const junkBurst = async () => {
    const lines = junk()
    const answers = await Promise.all(lines.map(([p]) => p))
    for (const [i, [, check]] of lines.entries()) check(answers[i]!)
  }
  /** A navigation that never answers, cancelled while in flight; the session serves the next call. */
  const cancelInFlight = async (session: string) => {
    const id = fresh()
    const pending = raw(id, "browser.navigate", { url: `${own}/never?${id}`, session })
    await new Promise((r) => setTimeout(r, random.int(0, 400)))
    const ack = await call("$/cancelRequest", { id })
    assert.deepStrictEqual(ack.result as unknown, { cancelled: true }, `${where()}: ${JSON.stringify(ack)}`)
    const answer = await pending
    assert.strictEqual(answer.error?.code, -32800, `${where()}: ${JSON.stringify(answer).slice(0, 800)}`)
    pages.set(session, "unknown")
    await ordered(session)
  }
  /** A burst whose last call is cancelled at once: it is answered once, either way; the calls before it are not. */
  const cancelQueued = async (session: string) => {
    const page = random.pick(pagesToVisit)
    const navigated = call("browser.navigate", { url: page.url, session })
    const id = fresh()
    const extracted = raw(id, "browser.extract", { instruction: "the page", session })
    const ack = await call("$/cancelRequest", { id })
    assert.isBoolean(
      (ack.result as { cancelled?: unknown } | undefined)?.cancelled,
      `${where()}: ${JSON.stringify(ack)}`
    )
    ok(await navigated, "the navigation before a cancelled call")
    const answer = await extracted
    if (answer.error !== undefined)
      assert.strictEqual(answer.error.code, -32800, `${where()}: ${JSON.stringify(answer)}`)
    pages.set(session, page)
  }
  const status = async (session: string) => {
    const answer = await call("browserStatus", { session })
    ok(answer, "status")
    const active = (answer.result as { active?: boolean } | undefined)?.active
    assert.strictEqual(active, pages.has(session), `${where()}: status of ${session}: ${JSON.stringify(answer)}`)
    sample()
  }
  /** Closes a session, by the sidecar or the tool; sometimes with a call of its own still in flight. */
  const close = async (session: string) => {
    // A close may come with a call of the session still in flight: that call is answered too (session_closed).
    const inFlight = pages.has(session) && random.chance(0.4)
    const before = inFlight ? call("browser.extract", { instruction: "the page", session }) : undefined
    const closed = await answered(
      call(random.pick(["browserClose", "browser.close"]), { session }),
      `close of ${session}${inFlight ? " with a call in flight" : ""}`
    )
    ok(closed, `close of ${session}`)
    // Answered once, a result or an error: the close may stop it.
    if (before !== undefined) await answered(before, "a call in flight when its session closed")
    pages.delete(session)
    const after = await answered(call("browserStatus", { session }), "status after close")
    assert.strictEqual((after.result as { active?: boolean } | undefined)?.active, false, `${where()}: closed`)
  }

  const steps = random.int(10, 14)
  for (step = 0; step < steps; step++) {
    const session = random.pick(names)
    const kind = random.pick([
      "ordered",
      "ordered",
      "failures",
      "failures",
      "junk",
      "junk",
      "cancelInFlight",
      "cancelQueued",
      "status",
      "close"
    ] as const)
    if (process.env.SLOPPY_TRACE) console.log(new Date().toISOString(), step, kind, session)
    if (kind === "ordered") await ordered(session)
    else if (kind === "failures") await failuresThenValid(session)
    else if (kind === "junk") await junkBurst()
    else if (kind === "cancelInFlight") await cancelInFlight(session)
    else if (kind === "cancelQueued") await cancelQueued(session)
    else if (kind === "status") await status(session)
    else await close(session)
    sample()
  }
  // A page-level failure run is exercised on every seed.
  if (failuresRun === 0) await failuresThenValid(names[0]!)
  sample()

  // Every session closed: none reports a browser, and none of the service's browsers is left.
  for (const session of names) await close(session)
  for (const session of names) await status(session)
  const noBrowsers = await waitFor(
    () => Descendants.descendants(service.child.pid ?? -1).filter((p) => browserOf(p.name)).length === 0,
    20_000
  )
  assert.isTrue(noBrowsers, `${where()}: browsers left after every session closed`)
  assert.strictEqual(service.unanswered(), 0, `${where()}: calls without an answer`)
  assert.strictEqual(service.extra(), 0, `${where()}: answers that answered no call (duplicates)`)
  assert.isAbove(tracker.seen().filter((p) => browserOf(p.name)).length, 0, "the run started browsers")

  // The client goes away: the service exits on its own and leaves no process or profile.
  service.child.stdin.end()
  const exit = await Promise.race([
    service.exited,
    new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), 30_000))
  ])
  assert.notStrictEqual(exit, "timeout", `${where()}: the service outlived its client`)
  const survivors = await waitFor(() => tracker.survivors().length === 0, 10_000)
  assert.isTrue(survivors, `${where()}: left running: ${JSON.stringify(tracker.survivors())}`)
  const leftProfiles = [...profiles].filter((p) => existsSync(p))
  assert.deepStrictEqual(leftProfiles, [], `${where()}: temp profiles left`)
  return { steps, sessions: names.length, browsers: tracker.seen().filter((p) => browserOf(p.name)).length }
}

/** `SLOPPY_SEED` replays one seed; otherwise a few fixed ones. */
const seeds = (() => {
  const raw = process.env.SLOPPY_SEED
  const n = raw === undefined || raw.trim() === "" ? Number.NaN : Number(raw)
  return Number.isSafeInteger(n) ? [n] : [Random.defaultSeed, Random.defaultSeed + 1, Random.defaultSeed + 2]
})()

describe("a sloppy agent over JSON-RPC", () => {
  for (const seed of seeds) {
    it.live(
      `seed ${seed}: every call answered once, in order per session, no retries after page failures, nothing left`,
      () =>
        Effect.gen(function* () {
          const fixtures = yield* SiteServer.start
          const own = yield* ownSite
          // Most of its wrong labels name nothing that will ever appear: a short wait for late content keeps the run
          // about order and answers, not about waiting.
          const service = startService({ SWITCHYARD_ELEMENT_WAIT_MS: "300" })
          const summary = yield* Effect.promise(() =>
            run(seed, service, fixtures, own.origin).catch((e: unknown) => {
              if (e instanceof Error) e.message = `[replay with SLOPPY_SEED=${seed}] ${e.message}`
              throw e
            })
          )
          yield* Effect.log(`seed ${seed}: ${JSON.stringify(summary)}`)
        }),
      120_000
    )
  }
})
