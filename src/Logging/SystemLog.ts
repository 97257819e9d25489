/**
 * The service's own log (seed 000): `system/YYYY-MM-DD.log` under the log root gets every Effect log line at info
 * and above as redacted JSON (the `stagehand_fallback` payloads among them); stderr gets only failure summaries.
 * A log directory that cannot be written is reported once on stderr and counted; logging never fails a call.
 */
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs"
import { join } from "node:path"
import { Cause, Effect, Layer, Logger, LogLevel } from "effect"
import { isSwitchyardError } from "../Errors.ts"
import * as Redact from "./Redact.ts"

export interface SystemLogOptions {
  readonly root: string
  readonly redactor?: Redact.Redactor
  /** Failure summaries on stderr (warnings and errors); on by default. */
  readonly stderr?: boolean
}

/** A Switchyard error as a log shows it: its tag, message and fields, never the library failure it wraps (`cause`). */
const loggable = (u: unknown): unknown => {
  if (!isSwitchyardError(u)) return u
  const { cause: _cause, ...fields } = u
  return { ...fields, message: u.message }
}

/** An error for `Cause.pretty`: a Switchyard error keeps its tag, message and stack, and loses its `cause`. */
const unwrapped = (u: unknown): unknown =>
  isSwitchyardError(u) ? { name: u._tag, message: u.message, ...(u.stack === undefined ? {} : { stack: u.stack }) } : u

/** `Cause.pretty` for logs: Switchyard errors (failures or defects) appear without the library failure they wrap. */
export const prettyCause = (cause: Cause.Cause<unknown>): string =>
  Cause.pretty(
    Cause.fromReasons(
      Cause.map(cause, unwrapped).reasons.map((reason) =>
        Cause.isDieReason(reason) && isSwitchyardError(reason.defect)
          ? Cause.annotate(Cause.die(unwrapped(reason.defect)), Cause.reasonAnnotations(reason)).reasons[0]!
          : reason
      )
    )
  )

/** A message that is itself a JSON payload (`{"event":"stagehand_fallback",…}`) is logged as that object. */
const payload = (message: unknown): unknown => {
  const parts = (Array.isArray(message) ? message : [message]).map(loggable)
  if (parts.length === 1 && typeof parts[0] === "string" && parts[0].startsWith("{")) {
    try {
      return JSON.parse(parts[0])
    } catch {
      return parts[0]
    }
  }
  return parts.length === 1 ? parts[0] : parts
}

export const make = (options: SystemLogOptions) => {
  const redactor = options.redactor ?? Redact.defaultRedactor
  const dir = join(options.root, "system")
  let day = ""
  let stream: WriteStream | undefined
  let failures = 0
  let reported = false

  const fail = (error: Error) => {
    failures++
    if (reported) return
    reported = true
    process.stderr.write(
      `switchyard: cannot write the system log in ${dir} (${error.message}); continuing without it\n`
    )
  }

  const streamFor = (date: Date) => {
    const today = date.toISOString().slice(0, 10)
    if (today !== day || stream === undefined) {
      stream?.end()
      day = today
      try {
        mkdirSync(dir, { recursive: true })
        stream = createWriteStream(join(dir, `${today}.log`), { flags: "a" })
        stream.on("error", fail)
      } catch (error) {
        fail(error as Error)
        stream = undefined
      }
    }
    return stream
  }

  const logger = Logger.make<unknown, void>(({ message, logLevel, date, cause }) => {
    if (LogLevel.isLessThan(logLevel, "Info")) return
    const line = redactor.value({
      ts: date.toISOString(),
      level: logLevel.toLowerCase(),
      message: payload(message),
      ...(cause.reasons.length === 0 ? {} : { cause: prettyCause(cause) })
    })
    streamFor(date)?.write(`${JSON.stringify(line)}\n`)
    if (options.stderr !== false && LogLevel.isGreaterThanOrEqualTo(logLevel, "Warn")) {
      // Redact the payload as a value: escaped JSON would hide quoted typed text from the text rules.
      const summary = redactor.value(payload(message))
      process.stderr.write(
        `switchyard: ${logLevel.toLowerCase()}: ${typeof summary === "string" ? summary : JSON.stringify(summary)}\n`
      )
    }
  })

  return {
    logger,
    failures: () => failures,
    close: () => new Promise<void>((resolve) => (stream ? stream.end(resolve) : resolve()))
  }
}

/** Replaces the default console logger with the system log (and stderr failure summaries) for the scope. */
export const layer = (options: SystemLogOptions) =>
  Layer.unwrap(
    Effect.acquireRelease(
      Effect.sync(() => make(options)),
      (log) => Effect.promise(log.close)
    ).pipe(Effect.map((log) => Logger.layer([log.logger])))
  )
