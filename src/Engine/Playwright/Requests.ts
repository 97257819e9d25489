/**
 * The requests playwright-core keeps for a page, bounded: its in-process dispatcher connection holds every request a
 * page made (with its response, headers and both sides' objects) until 10,000 exist, ~16 KiB each, for the page's life.
 *
 * playwright-core 1.65 has no public option for this, and its limit (`maxDispatchersForBucket`: 10,000 a kind, 100,000
 * for handles) is a constant of its bundle. So, for the in-process connection only (the one `connectOverCDP`
 * uses here), the connection's own check after each new request is followed by a release of the oldest requests of
 * that page, frame or context past `kept` — only requests already finished or failed (their last event sent), so an
 * act, a settle or an in-flight count never loses one it waits on. Element handles, frames and pages are never
 * touched. The shape read here is checked by test/Engine/Playwright/Requests.integration.test.ts: a playwright-core
 * that changes it makes `bound` answer `false` or leaves every request unfinished here (nothing is released), and
 * that test fail; a pass that throws stops the releasing, never playwright-core's own work.
 */
import type { Browser } from "playwright-core"

/** Finished requests kept per page: playwright-core's own window of recent requests (`page.requests()`) is 100. */
export const kept = 100

/** The server-side request and response, as far as this module reads them. */
interface ServerRequest {
  readonly _response?: { readonly _finishedPromise?: { isDone?: () => boolean } } | null
  readonly _failureText?: string | null
}

interface Dispatcher {
  readonly _type: string
  readonly _disposed: boolean
  readonly _object: unknown
  readonly _parent: Dispatcher | undefined
  readonly _dispatchers: Map<string, Dispatcher>
  _dispose(reason: string): void
}

interface DispatcherConnection {
  readonly _dispatchersByBucket: Map<string, Set<string>>
  readonly _dispatcherByGuid: Map<string, Dispatcher>
  maybeDisposeStaleDispatchers(bucket: string): void
}

/** playwright-core's in-process client connection answers `toImpl(itself)` with its dispatcher connection. */
const dispatcherConnectionOf = (browser: Browser): DispatcherConnection | undefined => {
  const client = (browser as unknown as { _connection?: { toImpl?: (x: unknown) => unknown } })._connection
  const connection = client?.toImpl?.(client) as Partial<DispatcherConnection> | undefined
  return connection !== undefined &&
    connection._dispatchersByBucket instanceof Map &&
    connection._dispatcherByGuid instanceof Map &&
    typeof connection.maybeDisposeStaleDispatchers === "function"
    ? (connection as DispatcherConnection)
    : undefined
}

/** A request whose last event (finished or failed) has been sent: nothing will report on it again. */
const done = (request: ServerRequest) =>
  typeof request._failureText === "string" || request._response?._finishedPromise?.isDone?.() === true

/** Releases the oldest finished requests of `scope` past `kept`, with their responses and routes. */
const release = (scope: Dispatcher) => {
  const finished: Array<Dispatcher> = []
  for (const child of scope._dispatchers.values()) {
    if (child._type === "Request" && done(child._object as ServerRequest)) finished.push(child)
  }
  for (const request of finished.slice(0, Math.max(0, finished.length - kept))) request._dispose("gc")
}

const bounded = new WeakSet<object>()

/**
 * Bounds the finished requests kept for each page of `browser`'s playwright-core connection (once per connection; every
 * browser connected in this process shares it). `false` when the connection is not in-process or not of the shape
 * this module knows: then nothing is released.
 */
export const bound = (browser: Browser): boolean => {
  const connection = dispatcherConnectionOf(browser)
  if (connection === undefined) return false
  if (bounded.has(connection)) return true
  bounded.add(connection)
  const check = connection.maybeDisposeStaleDispatchers.bind(connection)
  let seen = 0
  let broken = false
  connection.maybeDisposeStaleDispatchers = (bucket) => {
    check(bucket)
    if (bucket !== "Request" || broken) return
    const requests = connection._dispatchersByBucket.get("Request")
    // Once every tenth of `kept` new requests: a pass walks every request kept, a few hundred a page at most.
    if (requests === undefined || ++seen < kept / 10) return
    seen = 0
    try {
      const scopes = new Set<Dispatcher>()
      for (const guid of requests) {
        const parent = connection._dispatcherByGuid.get(guid)?._parent
        if (parent !== undefined) scopes.add(parent)
      }
      for (const scope of scopes) if (!scope._disposed) release(scope)
    } catch {
      broken = true
    }
  }
  return true
}
