/**
 * Runs SDK code that cannot be cancelled by supported means in a worker thread that can be: an interrupted call
 * terminates the worker, so no promise is left hanging and no timer keeps Node alive. The engine that owns it then
 * reports itself disconnected and the Sandbox connects a fresh one. A worker loads its SDK once: released cleanly, it
 * detaches and waits idle in its session's Keep for that session's next connect, and it is never ended mid-load.
 */
import { getCompileCacheDir } from "node:module"
import { dirname, extname } from "node:path"
import { fileURLToPath } from "node:url"
import { isMainThread, parentPort, Worker } from "node:worker_threads"
import { Context, Effect, Exit, type Fiber, Option, type Scope } from "effect"
import * as LibraryOutput from "../Logging/LibraryOutput.ts"

/** A failure crossing the thread boundary: the fields error normalizers match on. */
export interface WorkerFailure {
  readonly name: string
  readonly message: string
  readonly status?: number
  readonly code?: string
  /** The original error's stack frames (its trace without the message it starts with). */
  readonly frames?: string
  /** The worker died (terminated, crashed) rather than the call failing. */
  readonly dead?: boolean
  /** The original error, when it was raised on this side of the thread boundary (a worker crash). */
  readonly cause?: unknown
}

export interface Isolated {
  /** Calls a handler in the worker; interruption terminates the worker. */
  readonly call: <A>(method: string, ...args: ReadonlyArray<unknown>) => Effect.Effect<A, WorkerFailure>
  /** Calls a handler that only waits for an event (it does no work): interruption stops waiting for its answer. */
  readonly watch: <A>(method: string, ...args: ReadonlyArray<unknown>) => Effect.Effect<A, WorkerFailure>
  readonly alive: () => boolean
  /** The worker thread's id: the same id across connects means the worker was kept, not started again. */
  readonly threadId: number
}

type Message =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly error: WorkerFailure }

/** An error's stack frames without the message they start with, so a long message crosses the boundary once. */
export const framesOf = (error: unknown): string | undefined => {
  if (!(error instanceof Error) || typeof error.stack !== "string") return undefined
  const start = error.stack.search(/\n\s+at /)
  return start < 0 ? undefined : error.stack.slice(start)
}

const toFailure = (error: unknown): WorkerFailure => {
  if (typeof error !== "object" || error === null) return { name: "Error", message: String(error) }
  const e = error as { name?: unknown; message?: unknown; status?: unknown; statusCode?: unknown; code?: unknown }
  const status = typeof e.status === "number" ? e.status : typeof e.statusCode === "number" ? e.statusCode : undefined
  const frames = framesOf(error)
  return {
    name: typeof e.name === "string" ? e.name : "Error",
    message: typeof e.message === "string" ? e.message : String(error),
    ...(status === undefined ? {} : { status }),
    ...(typeof e.code === "string" ? { code: e.code } : {}),
    ...(frames === undefined ? {} : { frames })
  }
}

/**
 * A failure from a worker as the `cause` of the error it is mapped to. Only what was sent crosses the thread
 * boundary (name, message, status, frames), so the Error is rebuilt from that; a host-side original is kept as is.
 */
export const causeOf = (failure: {
  readonly name: string
  readonly message: string
  readonly status?: number
  readonly frames?: string
  readonly cause?: unknown
}): unknown => {
  if (failure.cause !== undefined) return failure.cause
  const error = new Error(failure.message)
  error.name = failure.name
  error.stack = `${failure.name}: ${failure.message}${failure.frames ?? ""}`
  return failure.status === undefined ? error : Object.assign(error, { status: failure.status })
}

/** A worker module beside `base` (pass `import.meta.url`), with `base`'s extension: `.ts` from source, `.js` built. */
export const sibling = (name: string, base: string): URL => new URL(`${name}${extname(fileURLToPath(base))}`, base)

/**
 * The worker's environment: the host's, plus its compile cache when the host has one (Node enables it per thread, and
 * a worker would otherwise compile its SDK from source on every start).
 */
const workerEnv = (): NodeJS.ProcessEnv => {
  const cache = getCompileCacheDir()
  if (cache === undefined || process.env.NODE_COMPILE_CACHE !== undefined) return process.env
  return { ...process.env, NODE_COMPILE_CACHE: dirname(cache) }
}

/** The longest a worker told to end while it still loads is given to finish loading before it is terminated anyway. */
const loadBoundMs = 60_000

/** A worker thread and the calls waiting on it. */
export interface Thread {
  readonly entry: string
  readonly worker: Worker
  readonly calls: Map<number, (message: Message) => void>
  nextId: number
  /** Its modules are loaded (message 0 came): terminating it is safe from here on. */
  loaded: boolean
  /** Terminated, crashed or told to end: it serves no more calls. */
  dead: boolean
  /** Attaches it has served. */
  attaches: number
}

/**
 * Attaches one worker serves before it is ended rather than kept: each leaves a little behind in the SDK (about 50 KB
 * of heap per Magnitude attach, measured), so a long session's worker is renewed now and then.
 */
const maxAttaches = 100

/**
 * Ends a thread: at once when it has loaded, else as soon as it has (terminating a worker while it loads a native
 * module, as magnitude-core's BAML, aborts the whole process), or after `loadBoundMs` if its load never ends.
 */
const end = (thread: Thread): Promise<unknown> => {
  thread.dead = true
  // threadId is -1 once the thread has exited.
  if (thread.loaded || thread.worker.threadId === -1) return thread.worker.terminate().catch(() => 0)
  return new Promise((resolve) => {
    const bound = setTimeout(() => resolve(thread.worker.terminate().catch(() => 0)), loadBoundMs)
    const settle = () => {
      clearTimeout(bound)
      resolve(thread.worker.terminate().catch(() => 0))
    }
    thread.worker.once("message", (message: Message) => (message.id === 0 ? settle() : undefined))
    thread.worker.once("exit", settle)
  })
}

/** Worker threads started and not yet exited, in this process: what a closed session must leave none of. */
let running = 0
export const runningThreads = (): number => running

const died = (thread: Thread, reason: string, cause?: unknown) => {
  thread.dead = true
  const error: WorkerFailure = { name: "WorkerExited", message: reason, dead: true, ...(cause ? { cause } : {}) }
  for (const [id, resolve] of thread.calls) resolve({ id, ok: false, error })
  thread.calls.clear()
}

/** Starts a worker on `entry` and waits for its modules to load; interrupted, it ends the worker once loaded. */
const start = (entry: URL): Effect.Effect<Thread, WorkerFailure> =>
  Effect.callback<Thread, WorkerFailure>((resume) => {
    // Flags meant for the host's own entry (`--input-type`, `--eval`) would stop a file-based worker from starting.
    const execArgv = process.execArgv.filter((a) => !/^--(input-type|eval|print)\b/.test(a) && a !== "-e")
    const worker = new Worker(entry, { execArgv, env: workerEnv() })
    const thread: Thread = {
      entry: entry.href,
      worker,
      calls: new Map(),
      nextId: 1,
      loaded: false,
      dead: false,
      attaches: 0
    }
    running++
    worker.on("message", (message: Message) => {
      if (message.id !== 0) return thread.calls.get(message.id)?.(message)
      thread.loaded = true
      if (!thread.dead) resume(Effect.succeed(thread))
    })
    worker.on("error", (error) => {
      died(thread, `the engine worker crashed: ${error.message}`, error)
      resume(Effect.fail({ ...toFailure(error), cause: error }))
    })
    worker.on("exit", () => {
      running--
      died(thread, "the engine worker stopped")
      resume(Effect.fail({ name: "WorkerExited", message: "the engine worker exited before it was ready", dead: true }))
    })
    // Interrupted, it waits for the thread to end: after its load, so nothing is left running once the caller gave up.
    return Effect.promise(() => end(thread))
  })

/**
 * One call on a thread. Interrupted, a call the SDK might still be running (`onInterrupt: "end"`) ends the thread,
 * the only way to really stop it; a call that only waits for an event (`"forget"`) just stops waiting.
 */
const request = <A>(
  thread: Thread,
  method: string,
  args: ReadonlyArray<unknown>,
  onInterrupt: "end" | "forget"
): Effect.Effect<A, WorkerFailure> =>
  Effect.callback<A, WorkerFailure>((resume) => {
    if (thread.dead) {
      resume(Effect.fail({ name: "WorkerExited", message: "the engine worker is not running", dead: true }))
      return
    }
    const id = thread.nextId++
    thread.calls.set(id, (message) => {
      thread.calls.delete(id)
      resume(message.ok ? Effect.succeed(message.value as A) : Effect.fail(message.error))
    })
    thread.worker.postMessage({ id, method, args })
    return Effect.sync(() => {
      thread.calls.delete(id)
      if (onInterrupt === "end") void end(thread)
    })
  })

/**
 * A session's idle workers, loaded and detached, one per entry at most: a worker released cleanly waits here for the
 * session's next connect of the same engine, which then only attaches. Nothing outlives the session: its idle workers
 * end when the session's browser is stopped (`clear`) or the session closes, and each attach starts from nothing.
 */
export interface Keep {
  readonly take: (entry: URL) => Thread | undefined
  /** Keeps a detached thread idle, or ends it when one of its entry is already idle or the keep is closed. */
  readonly give: (thread: Thread) => Effect.Effect<void>
  /** The idle threads' ids by entry: what a next connect would reuse. */
  readonly idle: () => ReadonlyArray<{ readonly entry: string; readonly threadId: number }>
  /** Ends the idle threads. */
  readonly clear: Effect.Effect<void>
}

/** The session's Keep; by default none, and a released worker ends. */
export const Keep = Context.Reference<Keep | undefined>("switchyard/Isolated/Keep", { defaultValue: () => undefined })

/**
 * A Keep for the scope's lifetime: closing the scope ends its idle workers and every worker given back later. A worker
 * left idle for `idleTimeToLiveMs` (default 5 minutes) is ended: a loaded SDK holds 50–180 MiB (measured, Magnitude
 * the most), which a session that moved on to another engine should not keep paying for.
 */
export const makeKeep = (
  options: { readonly idleTimeToLiveMs?: number } = {}
): Effect.Effect<Keep, never, Scope.Scope> =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const ttl = options.idleTimeToLiveMs ?? 5 * 60_000
    /** Each idle thread with the timer that ends it; taking the thread stops its timer. */
    const idle = new Map<string, { readonly thread: Thread; timer?: Fiber.Fiber<unknown> }>()
    let closed = false
    const clear = Effect.promise(() => {
      const ending = [...idle.values()].map((kept) => end(kept.thread))
      idle.clear()
      return Promise.all(ending)
    }).pipe(Effect.asVoid)
    /** Ends a thread that is still idle. */
    const expire = (thread: Thread) =>
      Effect.suspend(() => {
        if (idle.get(thread.entry)?.thread !== thread) return Effect.void
        idle.delete(thread.entry)
        return Effect.promise(() => end(thread))
      })
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        closed = true
      }).pipe(Effect.andThen(clear))
    )
    return {
      take: (entry) => {
        const kept = idle.get(entry.href)
        idle.delete(entry.href)
        kept?.timer?.interruptUnsafe()
        const thread = kept?.thread
        if (thread === undefined || thread.dead) return undefined
        thread.worker.ref()
        return thread
      },
      give: (thread) =>
        Effect.suspend(() => {
          if (thread.dead) return Effect.void
          if (closed || idle.has(thread.entry) || thread.attaches >= maxAttaches) {
            return Effect.promise(() => end(thread))
          }
          // An idle worker never keeps Node alive.
          thread.worker.unref()
          const kept: { readonly thread: Thread; timer?: Fiber.Fiber<unknown> } = { thread }
          idle.set(thread.entry, kept)
          return Effect.sleep(ttl).pipe(
            Effect.andThen(expire(thread)),
            Effect.forkIn(scope),
            Effect.flatMap((timer) =>
              Effect.sync(() => {
                kept.timer = timer
              })
            )
          )
        }),
      idle: () => [...idle.values()].map(({ thread }) => ({ entry: thread.entry, threadId: thread.worker.threadId })),
      clear
    } satisfies Keep
  })

export interface SpawnOptions {
  /** Bound on the worker's `detach` handler when released; past it the worker is terminated. Default 5 s. */
  readonly detachTimeoutMs?: number
}

/**
 * Attaches a worker on `entry` (a module that calls `serve`) with `data` for the scope's lifetime: the session's idle
 * one (Keep) if there is one, else a new one once its modules have loaded. A failing attach fails the spawn. Released,
 * the worker runs its `detach` handler and goes back to the Keep; a worker that was interrupted, failed to detach or
 * has no Keep to go to is ended.
 */
export const spawn = (
  entry: URL,
  data: unknown,
  options: SpawnOptions = {}
): Effect.Effect<Isolated, WorkerFailure, Scope.Scope> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function* () {
      const keep = yield* Keep
      const thread = keep?.take(entry) ?? (yield* restore(start(entry)))
      let attached = false
      yield* Effect.addFinalizer(() =>
        Effect.gen(function* () {
          if (thread.dead) return
          if (!attached) return yield* Effect.promise(() => end(thread))
          const detached = yield* request(thread, "$detach", [], "end").pipe(
            Effect.timeoutOption(options.detachTimeoutMs ?? 5_000),
            Effect.exit
          )
          const clean = Exit.isSuccess(detached) && Option.isSome(detached.value) && !thread.dead
          if (clean && keep !== undefined) yield* keep.give(thread)
          else yield* Effect.promise(() => end(thread))
        })
      )
      yield* restore(request(thread, "$attach", [data], "end"))
      attached = true
      thread.attaches++
      return {
        alive: () => !thread.dead,
        threadId: thread.worker.threadId,
        call: <A>(method: string, ...args: ReadonlyArray<unknown>) => request<A>(thread, method, args, "end"),
        watch: <A>(method: string, ...args: ReadonlyArray<unknown>) => request<A>(thread, method, args, "forget")
      } satisfies Isolated
    })
  )

// biome-ignore lint/suspicious/noExplicitAny: handlers take whatever their engine passes across the thread
export type Handlers = Record<string, (...args: Array<any>) => unknown>

/**
 * The worker side: call it at the top level of the worker's entry module once its modules are loaded (a top-level
 * `await import(…)` before it counts as loading). Each attach runs `attach(data)` and serves calls to the handlers
 * it returns; a `detach` handler among them runs when the host releases the worker, which may then attach it again.
 */
// biome-ignore lint/suspicious/noExplicitAny: the attach data is whatever the spawning engine sent
export const serve = (attach: (data: any) => Promise<Handlers> | Handlers) => {
  if (isMainThread || parentPort === null) throw new Error("Isolated.serve runs inside a worker thread")
  // What the SDK prints in this thread reaches the service's stderr redacted, as on the main thread.
  LibraryOutput.install()
  const port = parentPort
  const reply = (id: number, run: () => unknown) => {
    Promise.resolve()
      .then(run)
      .then(
        (value) => port.postMessage({ id, ok: true, value }),
        (error) => port.postMessage({ id, ok: false, error: toFailure(error) })
      )
  }
  let handlers: Handlers = {}
  port.on("message", ({ id, method, args }: { id: number; method: string; args: Array<unknown> }) =>
    reply(id, async () => {
      if (method === "$attach") {
        handlers = {}
        handlers = await attach(args[0])
        return
      }
      if (method === "$detach") {
        const { detach } = handlers
        handlers = {}
        await detach?.()
        return
      }
      const handler = handlers[method]
      if (handler === undefined) throw new Error(`the engine worker has no method "${method}"`)
      return handler(...args)
    })
  )
  // Loaded: from here on the host may terminate this thread safely.
  port.postMessage({ id: 0, ok: true, value: null })
}
