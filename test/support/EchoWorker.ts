/** A worker for the Isolated tests: answers, fails like an SDK error, or hangs with a live timer. */
import { serve } from "../../src/Engine/Isolated.ts"

serve((data: { greeting: string }) => {
  if (data.greeting === "refuse") throw Object.assign(new Error("no init"), { name: "InitError" })
  return {
    echo: (text: string) => `${data.greeting} ${text}`,
    fail: () => {
      throw Object.assign(new Error("rate limited"), { name: "AI_APICallError", statusCode: 429 })
    },
    // Like an SDK waiting forever on a dead socket, with a timer that would keep Node alive.
    hang: () => new Promise(() => setInterval(() => {}, 1_000))
  }
})
