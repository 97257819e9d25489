/** A worker for the Isolated tests whose modules take a while to load; it marks the end of its load in a file. */
import { writeFileSync } from "node:fs"
import { serve } from "../../src/Engine/Isolated.ts"

// Like magnitude-core's native module loading: the thread must not be terminated in the middle of it.
await new Promise((resolve) => setTimeout(resolve, 800))
const marker = process.env.SLOW_WORKER_MARKER
if (marker !== undefined) writeFileSync(marker, "loaded")

serve(() => ({ ping: () => "pong" }))
