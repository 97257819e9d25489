/** The web patterns, one part of the suite (Suite.ts): the parts run side by side. */
import { part } from "./Suite.ts"

await part(import.meta.filename)
