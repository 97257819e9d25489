/**
 * Where a person sees and drives the session's browser: a VNC display and the noVNC page that shows it, with a way
 * in that lasts one takeover. The human engine and the takeover need only this, not how the display was started.
 */
import { Context, type Effect, type Redacted } from "effect"

/** A way in for one person, for one takeover. */
export interface Access {
  /** The page that opens the session at once: the display's `url` with this takeover's password in its fragment. */
  readonly link: Redacted.Redacted<string>
  /** The password alone, for a person who opened `url` and is asked for it. */
  readonly password: Redacted.Redacted<string>
}

export class Display extends Context.Service<
  Display,
  {
    /** The X display the browser runs on, e.g. `:3`. */
    readonly name: string
    /** The page a person opens to watch and drive the browser; it carries no password, so it may be logged. */
    readonly url: string
    /** Whether everything that shows the display still runs. */
    readonly alive: Effect.Effect<boolean>
    /** Lets a person in: a fresh password, valid until `dismiss`. */
    readonly admit: Effect.Effect<Access>
    /** Ends every person's connection and makes the last password worthless: automation drives alone again. */
    readonly dismiss: Effect.Effect<void>
  }
>()("switchyard/Display") {}
