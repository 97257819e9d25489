/** A worker for the Isolated tests: answers, fails like an SDK error, or hangs with a live timer. */
import { serve } from "../../src/Engine/Isolated.ts"

/** Attaches this thread has served: more than one means it was kept and attached again. */
let attaches = 0

serve((data: { greeting: string }) => {
  if (data.greeting === "refuse") throw Object.assign(new Error("no init"), { name: "InitError" })
  attaches++
  let detached = false
  return {
    echo: (text: string) => `${data.greeting} ${text}`,
    attaches: () => attaches,
    fail: () => {
      throw Object.assign(new Error("rate limited"), { name: "AI_APICallError", statusCode: 429 })
    },
    // Like an SDK waiting forever on a dead socket, with a timer that would keep Node alive.
    hang: () => new Promise(() => setInterval(() => {}, 1_000)),
    // Like a watcher waiting for the page to go away: it does no work while it waits.
    gone: () => new Promise(() => {}),
    detached: () => detached,
    detach: () => {
      detached = true
    }
  }
})
