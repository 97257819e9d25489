/**
 * The takeovers a service has open, across its sessions: what `POST /resume` resumes and `switchyard status` lists,
 * kept in a private file under the log root (`run/takeovers/<pid>.json`, mode 0600) from which `switchyard takeover
 * show <session>` gives the operator the session's link and password. Nothing here is ever logged.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Context, Effect, Layer, Redacted } from "effect"
import { InvalidInput } from "../Errors/Page.ts"

/** A person has (or was asked to take) a session's browser. */
export interface Takeover {
  readonly id: string
  /** The session, as `browser.resume {session}`, `POST /sessions/<session>/resume` and the CLI name it. */
  readonly session: string
  /** The page to open to watch and drive the browser: noVNC asks for the password there. It may be logged. */
  readonly url: string
  /** The page that opens the session at once (this takeover's password in its fragment): for the person only. */
  readonly link: Redacted.Redacted<string>
  /** This takeover's VNC password: void once the takeover ends. */
  readonly password: Redacted.Redacted<string>
  readonly reason: string
  /** When it started, ISO 8601. */
  readonly since: string
  /** How to hand the browser back. */
  readonly resume: Resume
}

/** The ways to end a takeover: the tool on every surface, and over HTTP when the service serves it. */
export interface Resume {
  readonly tool: string
  readonly http?: string
  readonly cli?: string
}

/** Where the service answers HTTP, for the resume route and the CLI; `token`: whether a bearer token is needed. */
export interface HttpService {
  readonly url: string
  readonly token: boolean
}

/** The CLI's default service, which `switchyard resume` reaches without `--url`. */
const defaultServiceUrl = "http://127.0.0.1:8931"

export const resumeOf = (session: string, http?: HttpService): Resume => ({
  tool: `browser.resume ${JSON.stringify({ session })}`,
  ...(http === undefined
    ? {}
    : {
        http: `POST ${http.url}/sessions/${session}/resume`,
        cli: [
          `switchyard resume ${session}`,
          ...(http.url === defaultServiceUrl ? [] : [`--url ${http.url}`]),
          ...(http.token ? ['--token "$SWITCHYARD_HTTP_TOKEN"'] : [])
        ].join(" ")
      })
})

/** A takeover as the private file and `switchyard takeover show` hold it: link and password in the clear. */
export interface Listed {
  readonly pid: number
  readonly session: string
  readonly reason: string
  readonly since: string
  readonly url: string
  readonly link: string
  readonly password: string
  readonly resume: Resume
}

export class Takeovers extends Context.Service<
  Takeovers,
  {
    readonly started: (takeover: Takeover) => Effect.Effect<void>
    readonly ended: (takeover: Takeover) => Effect.Effect<void>
    /** The takeovers open now, oldest first. */
    readonly held: Effect.Effect<ReadonlyArray<Takeover>>
    /** Where the service answers HTTP, once it does: takeovers then say how to resume over HTTP and the CLI. */
    readonly serving: (http: HttpService) => Effect.Effect<void>
    readonly http: Effect.Effect<HttpService | undefined>
  }
>()("switchyard/Takeovers") {
  /** This service's takeovers; with `root`, also in the private file the CLI reads (removed with the layer). */
  static readonly layer = (options: { readonly root?: string } = {}) => Layer.effect(Takeovers, make(options))
}

const dirOf = (root: string) => join(root, "run", "takeovers")

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

export const make = Effect.fnUntraced(function* (options: { readonly root?: string }) {
  const open = new Map<string, Takeover>()
  let http: HttpService | undefined
  const file = options.root === undefined ? undefined : join(dirOf(options.root), `${process.pid}.json`)
  const write = () => {
    if (file === undefined) return
    const records: Array<Listed> = [...open.values()].map((t) => ({
      pid: process.pid,
      session: t.session,
      reason: t.reason,
      since: t.since,
      url: t.url,
      link: Redacted.value(t.link),
      password: Redacted.value(t.password),
      resume: t.resume
    }))
    try {
      mkdirSync(join(file, ".."), { recursive: true, mode: 0o700 })
      writeFileSync(`${file}.next`, JSON.stringify(records), { mode: 0o600 })
      renameSync(`${file}.next`, file)
    } catch {
      // An unwritable log root loses only the CLI's view; the handoff answer still carries the link.
    }
  }
  if (options.root !== undefined) {
    // Files of services that are gone name takeovers that ended with them.
    for (const record of readAll(options.root, true)) if (!record.live) rmSync(record.path, { force: true })
  }
  yield* Effect.addFinalizer(() => Effect.sync(() => file && rmSync(file, { force: true })))
  return Takeovers.of({
    started: (takeover) =>
      Effect.sync(() => {
        open.set(takeover.id, takeover)
        write()
      }),
    ended: (takeover) =>
      Effect.sync(() => {
        if (open.delete(takeover.id)) write()
      }),
    held: Effect.sync(() => [...open.values()]),
    serving: (where) =>
      Effect.sync(() => {
        http = where
      }),
    http: Effect.sync(() => http)
  })
})

const readAll = (root: string, all = false) => {
  let names: Array<string> = []
  try {
    names = readdirSync(dirOf(root)).filter((f) => /^\d+\.json$/.test(f))
  } catch {
    return []
  }
  return names.flatMap((name) => {
    const path = join(dirOf(root), name)
    const live = alive(Number.parseInt(name, 10))
    if (!live && !all) return []
    try {
      const records = JSON.parse(readFileSync(path, "utf8")) as Array<Listed>
      return [{ path, live, records }]
    } catch {
      return [{ path, live, records: [] as Array<Listed> }]
    }
  })
}

/** The takeovers open in the services running on this log root, for the CLI (link and password included). */
export const list = (root: string): ReadonlyArray<Listed> =>
  readAll(root)
    .flatMap((f) => f.records)
    .sort((a, b) => a.since.localeCompare(b.since))

/** `switchyard takeover list`: one line per session a person holds (no password). */
export const listing = (records: ReadonlyArray<Listed>) =>
  records.length === 0
    ? "no session is held by a person"
    : [["SESSION", "SINCE", "REASON", "PAGE"], ...records.map((r) => [r.session, r.since, r.reason, r.url])]
        .map((row) => row.map((cell, i) => (i < 3 ? cell.padEnd(i === 2 ? 30 : 26) : cell)).join(" "))
        .join("\n")

/** `switchyard takeover show <session>`: what lets the person in, and how the browser comes back. */
const details = (r: Listed) =>
  [
    `session   ${r.session} (service pid ${r.pid})`,
    `reason    ${r.reason}`,
    `since     ${r.since}`,
    `link      ${r.link}`,
    "          opens the session at once; it stops working when the takeover ends",
    `page      ${r.url} (asks for the password)`,
    `password  ${r.password}`,
    `resume    ${[r.resume.cli, r.resume.http, r.resume.tool].filter((way) => way !== undefined).join("\n          ")}`
  ].join("\n")

/** The details of `session`'s takeover (default: the only one held), or why there are none to show. */
export const find = (root: string, session?: string) =>
  Effect.suspend(() => {
    const held = list(root)
    const found =
      session === undefined ? (held.length === 1 ? held[0] : undefined) : held.find((t) => t.session === session)
    if (found !== undefined) return Effect.succeed(details(found))
    const names = held.map((t) => t.session).join(", ")
    return Effect.fail(
      new InvalidInput({
        field: "session",
        message:
          held.length === 0
            ? `no session is held by a person (log root ${root})`
            : session === undefined
              ? `a person holds ${held.length} sessions (${names}): name one`
              : `no person holds session "${session}"; held: ${names}`
      })
    )
  })
