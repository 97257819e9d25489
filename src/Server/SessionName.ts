/**
 * Session names as every surface takes them: `undefined` is the default session, anything else a short name. Apart
 * from Sessions.ts so a surface can check names without loading the sessions' browser stack.
 */
import { Effect } from "effect"
import { InvalidInput } from "../Errors/Page.ts"

export const defaultSession = "default"

const sessionName = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

export const isSessionName = (session: unknown): session is string | undefined =>
  session === undefined || (typeof session === "string" && sessionName.test(session))

export const invalidName = (session: unknown) =>
  new InvalidInput({
    field: "session",
    message:
      typeof session === "string"
        ? `session names are 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit; got "${session.slice(0, 80)}"`
        : `a session name is a string; got ${session === null ? "null" : typeof session}`
  })

/** A session name as the surfaces pass it: `undefined` is the default session; anything but a valid string is refused. */
export const sessionNameOf = (session: unknown): Effect.Effect<string, InvalidInput> =>
  isSessionName(session) ? Effect.succeed(session ?? defaultSession) : Effect.fail(invalidName(session))
