/**
 * Where a person sees and drives the session's browser: a VNC display and the noVNC page that shows it. The human
 * engine and the takeover need only this, not how the display was started.
 */
import { Context, type Effect } from "effect"

export class Display extends Context.Service<
  Display,
  {
    /** The X display the browser runs on, e.g. `:3`. */
    readonly name: string
    /** The page a person opens to watch and drive the browser (it carries no password). */
    readonly url: string
    /** Whether everything that shows the display still runs. */
    readonly alive: Effect.Effect<boolean>
  }
>()("switchyard/Display") {}
