/**
 * Progress for long MCP calls: each cascade step the call emits (attempt, retry, switch, escalation) becomes a
 * `notifications/progress`, plus a heartbeat, so clients that reset their request timeout on progress keep waiting.
 */
import { Effect } from "effect"
import * as Events from "../../Logging/Events.ts"

/** What a progress notification says about an event of the call: the cascade's steps, in a few words. */
const describeEvent = (event: Events.Stamped): string => {
  const fields = event as Record<string, unknown>
  // The call now waits for a person: the agent can hand them the way in while it waits.
  if (event.event === "human_takeover")
    return `a person is asked to take over (${String(fields.reason)}): browser.status gives the link that lets them in`
  const engine =
    typeof fields.engine === "string" ? ` ${fields.engine}${fields.mode ? `/${String(fields.mode)}` : ""}` : ""
  const detail = ["reason", "from", "to", "level", "attempt"]
    .filter((key) => fields[key] !== undefined)
    .map((key) => `${key} ${String(fields[key])}`)
    .join(", ")
  return `${event.event}${engine}${detail === "" ? "" : ` (${detail})`}`
}

/**
 * Runs a call reporting progress through `notify`: each event the cascade emits (attempt start, failure, fallback,
 * switch, escalation) and, while it runs, a heartbeat every `everyMs`.
 */
export const withProgress = <A>(work: Effect.Effect<A>, notify: (message: string) => void, everyMs: number) =>
  Effect.gen(function* () {
    const started = Date.now()
    const heartbeat = Effect.sync(() =>
      notify(`still running after ${Math.round((Date.now() - started) / 1000)} s`)
    ).pipe(Effect.delay(everyMs), Effect.forever)
    const watching = work.pipe(Effect.provideService(Events.Watcher, (event) => notify(describeEvent(event))))
    return yield* Effect.raceFirst(watching, heartbeat)
  })
