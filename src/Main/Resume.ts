/**
 * `switchyard resume <session>`: a person is done with a held session, wherever it is held. A job application's wait
 * is ended in the store it runs on — the fleet's (`DATABASE_URL`: the runners hear it at once) or this machine's
 * embedded store (the `switchyard apply` running it hears it within a second, or the next one to run it) — with the
 * person's answer when the wait asked a question. Any other session is resumed on a running `serve --http` service
 * (`POST <url>/sessions/<session>/resume`).
 */
import { existsSync } from "node:fs"
import { Effect, Layer, Redacted, Schedule } from "effect"
import { fleetClientLayer } from "../Apply/Command.ts"
import * as ApplyResume from "../Apply/Resume.ts"
import * as Runs from "../Apply/Runs.ts"
import { TaskEvents } from "../Cluster/Events.ts"
import * as Store from "../Cluster/Store.ts"
import { InvalidInput } from "../Errors/Page.ts"

export interface ResumeOptions {
  readonly session: string
  readonly answer?: Runs.Answer | undefined
  /** The service's base URL (default http://127.0.0.1:8931). */
  readonly url: string
  readonly token?: Redacted.Redacted<string> | undefined
  readonly store: Store.StoreOptions
}

const say = (line: string) => process.stderr.write(`switchyard resume: ${line}\n`)

/** The wait in the store for an application's session; none when the store is absent or holds none. */
const storedWait = (options: ResumeOptions) =>
  Effect.gen(function* () {
    if (Runs.applicationOfSession(options.session) === undefined) return undefined
    if (options.store.kind === "embedded" && !existsSync(options.store.file)) return undefined
    return yield* ApplyResume.waitOn(options.session)
  }).pipe(
    Effect.provide(TaskEvents.layer.pipe(Layer.provide(Store.layer(options.store)))),
    Effect.catchCause(() => Effect.succeed(undefined))
  )

/** On the embedded store: the request, then a few seconds for the process running the application to take it. */
const requestOnThisMachine = (options: ResumeOptions, wait: Runs.Wait) =>
  Effect.gen(function* () {
    yield* ApplyResume.request(wait, options.answer)
    const events = yield* TaskEvents
    const taken = yield* events.list(wait.run).pipe(
      Effect.map((all) => all.some((e) => e.eventType === Runs.event.humanResumed && e.data.token === wait.token)),
      Effect.repeat({ until: (done) => done, schedule: Schedule.spaced("250 millis") }),
      Effect.timeoutOption(5_000)
    )
    say(
      taken._tag === "Some"
        ? `resumed ${wait.step} of run ${wait.run}${options.answer === undefined ? "" : ` (${options.answer})`}`
        : `recorded for ${wait.step} of run ${wait.run}: no \`switchyard apply\` runs it now; the next one continues from there`
    )
  }).pipe(Effect.provide(TaskEvents.layer.pipe(Layer.provide(Store.layer(options.store)))))

/** A session held on a running service: its HTTP resume. */
const resumeOnService = (options: ResumeOptions) =>
  Effect.tryPromise({
    try: async () => {
      const target = `${options.url.replace(/\/+$/, "")}/sessions/${encodeURIComponent(options.session)}/resume`
      const response = await fetch(target, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(options.token === undefined ? {} : { authorization: `Bearer ${Redacted.value(options.token)}` })
        },
        body: JSON.stringify(options.answer === undefined ? {} : { answer: options.answer })
      })
      return { target, status: response.status, body: await response.text() }
    },
    catch: (cause) =>
      new InvalidInput({
        field: "session",
        message: `no application waits on ${options.session} in ${Store.describe(options.store)}, and no service answered at ${options.url} (${cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause)}); --url names the service`
      })
  })

export const run = (options: ResumeOptions) =>
  Effect.gen(function* () {
    const wait = yield* storedWait(options)
    if (wait !== undefined) {
      if (options.store.kind === "postgres") {
        const done = yield* ApplyResume.complete(wait, options.answer).pipe(
          Effect.provide(yield* fleetClientLayer(options.store))
        )
        say(`resumed ${done.step} of run ${done.run}${options.answer === undefined ? "" : ` (${options.answer})`}`)
        return
      }
      return yield* requestOnThisMachine(options, wait)
    }
    const answer = yield* resumeOnService(options)
    if (answer.status >= 200 && answer.status < 300) {
      process.stdout.write(`${answer.body.trim()}\n`)
      return
    }
    say(`${answer.target} answered ${answer.status}: ${answer.body.trim().slice(0, 500)}`)
    process.exitCode = 1
  })
