/**
 * The VNC stack's processes: each in its own process group, killed by the kernel when this process dies (setpriv
 * --pdeathsig), stopped with its scope (SIGTERM, then SIGKILL of the group), and waited for until it says it is ready.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { type AddressInfo, createServer } from "node:net"
import { Effect, Exit, Scope } from "effect"
import { BrowserLaunchFailed } from "../../../Errors/Browser.ts"

/** setpriv (util-linux), when installed: without it a killed service would leave the stack running. */
export const setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].find(existsSync)

export interface Proc {
  readonly name: string
  readonly executable: string
  readonly child: ChildProcess
  readonly exited: () => boolean
  readonly exit: Promise<void>
  /** Exited, and what it wrote before is read (or a moment passed: a forked helper may hold its pipes). */
  readonly settled: Promise<void>
  /** How it ended, for error messages. */
  readonly status: () => string
  /** The last lines it wrote, for error messages. */
  readonly output: () => string
}

const spawnGroup = (name: string, executable: string, args: ReadonlyArray<string>, displayFd = false): Proc => {
  const [command, argv] = setpriv
    ? [setpriv, ["--pdeathsig", "SIGKILL", "--", executable, ...args]]
    : [executable, [...args]]
  // Own process group (detached), so stopping reaches whatever the process forked (websockify forks per client).
  const child = spawn(command, argv, {
    detached: true,
    stdio: displayFd ? ["ignore", "pipe", "pipe", "pipe"] : ["ignore", "pipe", "pipe"]
  })
  let exited = false
  let status = "running"
  const exit = new Promise<void>((done) => {
    child.once("exit", (code, signal) => {
      exited = true
      status = signal ?? `code ${code}`
      done()
    })
    child.once("error", (error) => {
      exited = true
      status = error.message
      done()
    })
  })
  const closed = new Promise<void>((done) => child.once("close", () => done()))
  const settled = exit.then(() => Promise.race([closed, new Promise<void>((done) => setTimeout(done, 500))]))
  // Keep draining both pipes for the process's whole life: a full pipe would block it.
  const tail: Array<string> = []
  const keep = (chunk: string) => {
    for (const line of chunk.split("\n")) {
      if (line.trim() === "") continue
      tail.push(line.trim())
      if (tail.length > 6) tail.shift()
    }
  }
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding("utf8")
    stream?.on("data", keep)
  }
  return {
    name,
    executable,
    child,
    exited: () => exited,
    exit,
    settled,
    status: () => status,
    output: () => tail.join(" | ")
  }
}

const signalGroup = (proc: Proc, signal: NodeJS.Signals) => {
  const pid = proc.child.pid
  if (pid === undefined) return
  try {
    process.kill(-pid, signal)
  } catch {
    try {
      proc.child.kill(signal)
    } catch {
      // already gone
    }
  }
}

const exitWithin = (proc: Proc, ms: number) =>
  new Promise<void>((done) => {
    const timer = setTimeout(done, ms)
    void proc.exit.then(() => {
      clearTimeout(timer)
      done()
    })
  })

/** SIGTERM, then SIGKILL of the whole group (helpers too, and a process that ignored SIGTERM); bounded. */
const stop = (proc: Proc, graceMs: number) =>
  Effect.promise(async () => {
    if (!proc.exited()) {
      signalGroup(proc, "SIGTERM")
      await exitWithin(proc, graceMs)
    }
    signalGroup(proc, "SIGKILL")
    await exitWithin(proc, 2_000)
  })

/**
 * Resolves with what `watch` reports, or rejects when the process exits first or the time runs out. Timers are real
 * ones, not Effect's clock: starting a stack must not wait on a test's TestClock.
 */
const whenReady = <A>(
  proc: Proc,
  timeoutMs: number,
  signal: AbortSignal,
  watch: (ready: (value: A) => void) => () => void
) =>
  new Promise<A>((resolve, reject) => {
    let settled = false
    let unwatch = () => {}
    const finish = (error: Error | undefined, value?: A) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      unwatch()
      signal.removeEventListener("abort", aborted)
      if (error) reject(error)
      else resolve(value as A)
    }
    const aborted = () => finish(new Error("interrupted"))
    const timer = setTimeout(() => finish(new Error(`not ready within ${timeoutMs} ms`)), timeoutMs)
    signal.addEventListener("abort", aborted)
    void proc.settled.then(() => finish(new Error(`exited (${proc.status()}) before it was ready`)))
    unwatch = watch((value) => finish(undefined, value))
  })

/** A started process: stopped with the current scope, whatever happens next. */
export const started = (
  name: string,
  executable: string,
  args: ReadonlyArray<string>,
  graceMs: number,
  displayFd = false
) =>
  Effect.acquireRelease(
    Effect.sync(() => spawnGroup(name, executable, args, displayFd)),
    (proc) => stop(proc, graceMs)
  )

const launchFailed = (proc: Proc, cause: unknown) =>
  new BrowserLaunchFailed({
    engine: "human",
    executable: proc.executable,
    retryable: true,
    message: `${proc.name} did not start: ${cause instanceof Error ? cause.message : String(cause)}${proc.output() === "" ? "" : `; it said: ${proc.output()}`}`,
    cause
  })

export const ready = <A>(proc: Proc, timeoutMs: number, watch: (ready: (value: A) => void) => () => void) =>
  Effect.tryPromise({
    try: (signal) => whenReady(proc, timeoutMs, signal, watch),
    catch: (cause) => launchFailed(proc, cause)
  })

const freePort = (host: string) =>
  Effect.tryPromise({
    try: () =>
      new Promise<number>((resolve, reject) => {
        const server = createServer()
        server.once("error", reject)
        server.listen(0, host, () => {
          const { port } = server.address() as AddressInfo
          server.close(() => resolve(port))
        })
      }),
    catch: (cause) =>
      new BrowserLaunchFailed({
        engine: "human",
        retryable: false,
        message: `cannot listen on ${host}: ${cause instanceof Error ? cause.message : String(cause)}`,
        cause
      })
  })

const portTaken = /could not obtain listening port|address already in use/i

/**
 * Starts a process on a port picked just before (another process may take it in between): tries again with a fresh
 * port when it reports the port taken. Each attempt's process lives in its own scope, closed when the attempt fails.
 */
export const onFreePort = <A>(
  host: string,
  fixed: number | undefined,
  attempt: (port: number) => Effect.Effect<A, BrowserLaunchFailed, Scope.Scope>
) =>
  Effect.gen(function* () {
    const parent = yield* Effect.scope
    for (let tries = 1; ; tries++) {
      const port = fixed ?? (yield* freePort(host))
      const scope = yield* Scope.fork(parent)
      const result = yield* Effect.exit(attempt(port).pipe(Scope.provide(scope)))
      if (Exit.isSuccess(result)) return result.value
      yield* Scope.close(scope, Exit.void)
      const error = result.cause.reasons[0]
      const taken = error?._tag === "Fail" && portTaken.test(error.error.message)
      if (!taken || fixed !== undefined || tries >= 3) return yield* Effect.failCause(result.cause)
    }
  })
