/**
 * Switchyard's entry: turns on Node's compile cache first (modules parsed and type-stripped once, reused by later
 * starts), then runs the command line (Main/Cli.ts).
 */
import { enableCompileCache } from "node:module"

enableCompileCache()
await import("./Main/Cli.ts")
