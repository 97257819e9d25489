/**
 * One chaos run against a real service process: workers drive several sessions through form, search and page
 * tasks (canary secrets in what they type and in URL queries), a prober asks `browser.status` of every session
 * throughout, and a seeded schedule injects faults; the run ends with SIGTERM while calls are in flight.
 */
import { Effect } from "effect"
import type * as LlmServer from "../fixtures/LlmServer.ts"
import { chatCompletion } from "../fixtures/LlmServer.ts"
import type { SiteServer } from "../fixtures/SiteServer.ts"
import type { Service } from "../support/Service.ts"
import * as Descendants from "./Descendants.ts"
import * as Faults from "./Faults.ts"
import type { Call } from "./Invariants.ts"
import type { Random } from "./Random.ts"

export interface RunOptions {
  readonly service: Service
  readonly site: SiteServer
  readonly llm: LlmServer.LlmServer
  readonly logRoot: string
  readonly sessions: ReadonlyArray<string>
  readonly random: Random
  /** How long workers run and faults are injected before the final SIGTERM. */
  readonly durationMs: number
  /** Faults beyond one of each kind. */
  readonly extraFaults: number
  /** Tool calls answered before the final SIGTERM, at least (the run goes on past `durationMs` for them, bounded). */
  readonly minCalls: number
}

export interface Fault {
  readonly kind: Faults.FaultKind
  readonly session: string
  /** Planned time from the start of the faults' clock (every session at work). */
  readonly atMs: number
  injected?: boolean
  detail?: string
}

export interface Probe {
  readonly session: string
  readonly sentAt: number
  latencyMs?: number
  ok?: boolean
}

export interface RunReport {
  readonly calls: ReadonlyArray<Call>
  readonly probes: ReadonlyArray<Probe>
  readonly faults: ReadonlyArray<Fault>
  /** Periods the log root could not be written, with a margin for writes queued around them. */
  readonly logWindows: ReadonlyArray<{ readonly from: number; readonly to: number; readonly how: string }>
  readonly canaries: ReadonlyArray<string>
  /** When every session had had a call of its work answered: the faults' clock starts there. */
  readonly warmAt: number
  readonly sigtermAt: number | undefined
  /** Calls (probes aside) still waiting for an answer when SIGTERM was sent. */
  readonly inFlightAtSigterm: ReadonlyArray<string>
  readonly exit: { code: number | null; signal: NodeJS.Signals | null } | "did not exit"
  readonly shutdownMs: number | undefined
  readonly processes: ReturnType<typeof Descendants.tracker>
  /** The hang task, call by call: the click that hangs the page, then what the calls after it got. */
  readonly afterHang: Array<string>
  /** Everything the service wrote on stderr. */
  readonly stderr: () => string
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)))

/** Faults in a seeded order at seeded times: every kind once, then `extra` more of any kind. */
export const plan = (random: Random, sessions: ReadonlyArray<string>, durationMs: number, extra: number) => {
  const kinds = [
    ...random.shuffle(Faults.faultKinds),
    ...Array.from({ length: extra }, () => random.pick(Faults.faultKinds))
  ]
  // Spread over the run, after a warm-up, leaving the end for the last faults to play out.
  const start = 2_000
  const span = durationMs - start - 3_000
  const step = span / kinds.length
  return kinds.map(
    (kind, i): Fault => ({
      kind,
      session: random.pick(sessions),
      atMs: Math.round(start + i * step + random.next() * step * 0.5)
    })
  )
}

const llmReply = (kind: Faults.FaultKind, random: Random): LlmServer.Reply => {
  switch (kind) {
    case "llm_500":
      return { status: 500, error: "chaos: the model is down" }
    case "llm_429":
      return { status: 429, error: "chaos: rate limited", headers: { "retry-after": "1" } }
    case "llm_hang":
      return { hang: true }
    default:
      return random.pick<LlmServer.Reply>([
        { raw: "{not json" },
        { raw: "<html>502 bad gateway</html>", contentType: "text/html" },
        { json: chatCompletion('{"unexpected": true}') }
      ])
  }
}

export const run = async (options: RunOptions): Promise<RunReport> => {
  const { service, site, llm, random, sessions } = options
  const t0 = Date.now()
  const now = () => Date.now() - t0
  const calls: Array<Call> = []
  const probes: Array<Probe> = []
  const logWindows: Array<{ from: number; to: number; how: string }> = []
  const afterHang: Array<string> = []
  const processes = Descendants.tracker(service.child.pid!)
  let sigtermAt: number | undefined
  let seq = 0
  let stderr = ""
  service.child.stderr.on("data", (chunk) => {
    stderr += String(chunk)
  })

  // Canaries: what an agent types and puts in URLs, which must never reach the logs.
  const tag = () => Math.floor(random.next() * 0xffffffff).toString(16)
  const canary = {
    email: `chaos.${tag()}@canary-mail.test`,
    name: `Zebulon Canary${tag()}`,
    password: `pw-Canary-${tag()}`,
    query: `qCanary${tag()}`,
    search: `searchCanary${tag()}`
  }

  /** One JSON-RPC call with our own id; nothing is sent once SIGTERM went out. */
  const rpc = (session: string, method: string, params: Record<string, unknown> = {}, traceId?: string) => {
    if (sigtermAt !== undefined || service.child.exitCode !== null || service.child.signalCode !== null) {
      return Promise.resolve(undefined)
    }
    const id = `${session}-${++seq}`
    const call: Call = { id, session, method, sentAt: now(), ...(traceId === undefined ? {} : { traceId }) }
    calls.push(call)
    const line = JSON.stringify({
      jsonrpc: "2.0",
      id,
      method,
      params: { session, ...params, ...(traceId === undefined ? {} : { traceId }) }
    })
    return service.send(line, id).then((answer) => {
      call.answer = answer
      call.answeredAt = now()
      if (method !== "browser.status" && method !== "browserStatus") answeredOn(session)
      return answer
    })
  }

  // The faults' clock starts once every session has had a call of its work answered (the service built, its browsers
  // up), however long that takes on a loaded machine: a fault aimed at a browser then finds one.
  const working = new Set<string>()
  let allWorking = () => {}
  const warm = new Promise<void>((resolve) => {
    allWorking = resolve
  })
  const answeredOn = (session: string) => {
    working.add(session)
    if (working.size === sessions.length) allWorking()
  }

  type Step = readonly [method: string, params: Record<string, unknown>]
  const tasks: Record<string, () => ReadonlyArray<Step>> = {
    form: () => [
      ["browser.navigate", { url: site.url(`/forms.html?ref=${canary.query}&page=${random.int(1, 9)}`) }],
      ["browser.act", { instruction: `fill "Email" with "${canary.email}"` }],
      ["browser.act", { instruction: `fill "Full name" with "${canary.name}"` }],
      ["browser.act", { instruction: `fill "Password" with "${canary.password}"` }],
      ["browser.act", { instruction: 'click "Submit"' }],
      ["browser.extract", { instruction: "the status line" }]
    ],
    search: () => [
      ["browser.navigate", { url: site.url(`/forms.html?q=${canary.search}`) }],
      ["browser.act", { instruction: `fill "Search" with "${canary.search}"` }],
      ["browser.screenshot", {}]
    ],
    page: () => [
      ["browser.navigate", { url: site.url(random.pick(["/plain.html", "/long.html"])) }],
      ["browser.extract", { instruction: "the heading" }],
      ["browser.screenshot", { fullPage: random.chance(0.3) }]
    ],
    replay: () => [
      ["browser.observe", { instruction: "the submit button" }],
      [
        "browser.act",
        {
          action: {
            selector: "xpath=//*[@id='submit']",
            method: "click",
            arguments: [],
            description: "Submit"
          }
        }
      ]
    ]
  }
  const taskNames = Object.keys(tasks)
  const hangNext = new Set<string>()

  const worker = async (session: string, rng: Random) => {
    let n = 0
    while (sigtermAt === undefined) {
      const traceId = `chaos-${session}-${++n}`
      if (hangNext.delete(session)) {
        // The page's main thread spins forever; the agent tries to move on, then gives up on the browser.
        const steps: ReadonlyArray<readonly [string, string, Record<string, unknown>]> = [
          ["open", "browser.navigate", { url: site.url("/hang.html") }],
          ["click Freeze", "browser.act", { instruction: 'click "Freeze the page"' }],
          ["navigate away", "browser.navigate", { url: site.url("/forms.html") }],
          ["status", "browser.status", {}],
          ["close", "browser.close", {}]
        ]
        for (const [label, method, params] of steps) {
          const started = now()
          const answer = await rpc(session, method, params, traceId)
          if (answer === undefined) break
          const error = answer.error as { data?: { type?: string } } | undefined
          afterHang.push(`${session} ${label}: ${error?.data?.type ?? "ok"} in ${now() - started} ms`)
        }
        continue
      }
      for (const [method, params] of tasks[rng.pick(taskNames)]!()) {
        if ((await rpc(session, method, params, traceId)) === undefined) break
      }
    }
  }

  const prober = async () => {
    const outstanding = new Set<string>()
    while (sigtermAt === undefined) {
      processes.sample()
      for (const session of sessions) {
        if (outstanding.has(session)) continue
        outstanding.add(session)
        const probe: Probe = { session, sentAt: now() }
        probes.push(probe)
        void rpc(session, "browser.status").then((answer) => {
          outstanding.delete(session)
          probe.latencyMs = now() - probe.sentAt
          probe.ok = answer?.result !== undefined
        })
      }
      await sleep(500)
    }
  }

  const browserOf = async (session: string) => {
    const answer = await rpc(session, "browserStatus")
    const status = answer?.result as { browserPid: number | null; wsEndpoint: string | null } | undefined
    return status?.browserPid && status.wsEndpoint ? { pid: status.browserPid, ws: status.wsEndpoint } : undefined
  }

  const inject = async (fault: Fault) => {
    switch (fault.kind) {
      case "kill_chromium":
      case "cdp_socket":
      case "close_target": {
        // The planned session, or another one with a browser running; when every session is between browsers (one
        // just killed, the others closed), the fault waits a few seconds for one to start.
        let browser: { pid: number; ws: string } | undefined
        for (const deadline = now() + 5_000; browser === undefined && now() < deadline; ) {
          for (const session of [fault.session, ...sessions.filter((s) => s !== fault.session)]) {
            browser = await browserOf(session)
            if (browser !== undefined) {
              fault.detail = session === fault.session ? "" : `on ${session}`
              break
            }
          }
          if (browser === undefined) await sleep(250)
        }
        if (browser === undefined) {
          fault.detail = "no browser running"
          return
        }
        if (fault.kind === "kill_chromium") {
          Faults.killChromium(browser.pid)
          fault.detail += ` pid ${browser.pid}`
        } else if (fault.kind === "cdp_socket") {
          const closed = Faults.resetCdpSockets(Number(new URL(browser.ws).port))
          if (closed === undefined) {
            fault.detail = "ss -K unavailable"
            return
          }
          fault.detail += ` ${closed} sockets reset`
        } else {
          const closed = await Effect.runPromise(
            Faults.closePageTargets(browser.ws).pipe(Effect.orElseSucceed(() => 0))
          )
          fault.detail += ` ${closed} page targets closed`
        }
        fault.injected = true
        return
      }
      case "hang_page":
        hangNext.add(fault.session)
        fault.injected = true
        return
      case "log_unwritable": {
        const from = now()
        const unwritable = Faults.makeUnwritable(options.logRoot)
        fault.injected = true
        fault.detail = unwritable.how
        try {
          await sleep(2_500)
        } finally {
          unwritable.restore()
          // Writes queued just before or after still land in the window: a margin on both sides.
          logWindows.push({ from: from - 1_000, to: now() + 1_000, how: unwritable.how })
        }
        return
      }
      default:
        llm.faultNext(llmReply(fault.kind, random))
        fault.injected = true
        fault.detail = "armed for the next model request"
    }
  }

  const faults = plan(random, sessions, options.durationMs, options.extraFaults)
  const scheduler = async (from: number) => {
    for (const fault of faults) {
      await sleep(from + fault.atMs - now())
      await inject(fault)
    }
  }

  const rngs = sessions.map(() => random.fork())
  const workers = sessions.map((session, i) => worker(session, rngs[i]!))
  const probing = prober()
  // Bounded only so that a service that never answers still ends the run (the invariants then say why).
  await Promise.race([warm, sleep(120_000)])
  const from = now()
  await scheduler(from)
  await sleep(from + options.durationMs - now())
  // A loaded machine answers fewer calls in the same time: the run goes on (bounded) until enough work was answered
  // for the log invariants to say something.
  const answeredWork = () =>
    calls.filter((c) => c.answer !== undefined && c.method !== "browser.status" && c.method !== "browserStatus").length
  const enoughBy = now() + 120_000
  while (answeredWork() < options.minCalls && now() < enoughBy) await sleep(100)

  // SIGTERM while workers' calls are in flight.
  const workerCalls = () => calls.filter((c) => c.answer === undefined && c.method !== "browser.status")
  for (let i = 0; i < 150 && workerCalls().length < 2; i++) await sleep(20)
  const inFlightAtSigterm = workerCalls().map((c) => `${c.id} ${c.method}`)
  processes.sample()
  sigtermAt = now()
  service.child.kill("SIGTERM")
  const exit = await Promise.race([service.exited, sleep(30_000).then(() => "did not exit" as const)])
  const shutdownMs = exit === "did not exit" ? undefined : now() - sigtermAt
  await Promise.all([...workers, probing])
  return {
    calls,
    probes,
    faults,
    logWindows,
    canaries: Object.values(canary),
    warmAt: from,
    sigtermAt,
    inFlightAtSigterm,
    exit,
    shutdownMs,
    processes,
    afterHang,
    stderr: () => stderr
  }
}
