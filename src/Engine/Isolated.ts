/**
 * Runs SDK code that cannot be cancelled by supported means in a worker thread that can be: an interrupted call
 * terminates the worker, so no promise is left hanging and no timer keeps Node alive. The engine that owns it then
 * reports itself disconnected and the Sandbox connects a fresh one.
 */
import { extname } from "node:path"
import { fileURLToPath } from "node:url"
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads"
import { Effect, type Scope } from "effect"

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
  readonly alive: () => boolean
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
 * Starts `entry` (a module that calls `serve`) in a worker with `init` as its workerData, for the scope's lifetime.
 * `init` is the handler the worker runs first; a failure there fails the spawn.
 */
export const spawn = (entry: URL, data: unknown): Effect.Effect<Isolated, WorkerFailure, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ worker: Worker; state: { dead: boolean } }, WorkerFailure>((resume) => {
      // Flags meant for the host's own entry (`--input-type`, `--eval`) would stop a file-based worker from starting.
      const execArgv = process.execArgv.filter((a) => !/^--(input-type|eval|print)\b/.test(a) && a !== "-e")
      const worker = new Worker(entry, { workerData: data, execArgv })
      const state = { dead: false }
      const onReady = (message: Message) => {
        if (message.id !== 0) return
        worker.off("message", onReady)
        if (message.ok) resume(Effect.succeed({ worker, state }))
        else {
          void worker.terminate()
          resume(Effect.fail(message.error))
        }
      }
      worker.on("message", onReady)
      worker.once("error", (error) => resume(Effect.fail({ ...toFailure(error), cause: error })))
      worker.once("exit", () => {
        state.dead = true
        resume(
          Effect.fail({ name: "WorkerExited", message: "the engine worker exited before it was ready", dead: true })
        )
      })
      return Effect.sync(() => void worker.terminate())
    }),
    ({ worker }) => Effect.promise(() => worker.terminate().catch(() => 0))
  ).pipe(
    Effect.map(({ worker, state }): Isolated => {
      let nextId = 1
      const waiting = new Map<number, (message: Message) => void>()
      worker.on("message", (message: Message) => waiting.get(message.id)?.(message))
      const died = (reason: string, cause?: unknown) => {
        state.dead = true
        const error: WorkerFailure = { name: "WorkerExited", message: reason, dead: true, ...(cause ? { cause } : {}) }
        for (const [id, resolve] of waiting) resolve({ id, ok: false, error })
        waiting.clear()
      }
      worker.on("exit", () => died("the engine worker stopped"))
      worker.on("error", (error) => died(`the engine worker crashed: ${error.message}`, error))
      return {
        alive: () => !state.dead,
        call: <A>(method: string, ...args: ReadonlyArray<unknown>) =>
          Effect.callback<A, WorkerFailure>((resume) => {
            if (state.dead) {
              resume(Effect.fail({ name: "WorkerExited", message: "the engine worker is not running", dead: true }))
              return
            }
            const id = nextId++
            waiting.set(id, (message) => {
              waiting.delete(id)
              resume(message.ok ? Effect.succeed(message.value as A) : Effect.fail(message.error))
            })
            worker.postMessage({ id, method, args })
            // The SDK cannot stop this call: stopping the thread is the only way to really end it.
            return Effect.sync(() => {
              waiting.delete(id)
              state.dead = true
              void worker.terminate()
            })
          })
      }
    })
  )

// biome-ignore lint/suspicious/noExplicitAny: handlers take whatever their engine passes across the thread
export type Handlers = Record<string, (...args: Array<any>) => unknown>

/**
 * The worker side: runs `init(workerData)` (answered as message 0), then serves calls to the handlers it returns.
 * Call it at the top level of the worker's entry module.
 */
// biome-ignore lint/suspicious/noExplicitAny: workerData is whatever the spawning engine sent
export const serve = (init: (data: any) => Promise<Handlers> | Handlers) => {
  if (isMainThread || parentPort === null) throw new Error("Isolated.serve runs inside a worker thread")
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
  reply(0, async () => {
    handlers = await init(workerData)
  })
  port.on("message", ({ id, method, args }: { id: number; method: string; args: Array<unknown> }) =>
    reply(id, () => {
      const handler = handlers[method]
      if (handler === undefined) throw new Error(`the engine worker has no method "${method}"`)
      return handler(...args)
    })
  )
}
