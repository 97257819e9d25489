#!/usr/bin/env node
/**
 * Switchyard's entry: turns on Node's compile cache first (modules parsed and type-stripped once, reused by later
 * starts), opens MCP's stdio front when that is what this process serves (it answers `initialize` while the rest
 * loads), spawns the first warm browser when this process serves (once `initialize` is answered on MCP's stdio front;
 * else at once, its start beside the service's modules' load at a lower CPU weight until the service reads requests),
 * then runs the command line (Main/Cli.ts).
 */
import { enableCompileCache } from "node:module"
import * as ServeArgs from "./Main/ServeArgs.ts"
import * as EarlyBrowser from "./Sandbox/Provider/EarlyBrowser.ts"
import * as Front from "./Server/Mcp/Front.ts"

enableCompileCache()
const serve = ServeArgs.flags(process.argv.slice(2))
if (Front.opensAtSpawn(serve, process.env)) {
  await Front.open("underscore")
  // Loading the command line holds the event loop: what the client sent at spawn is read and answered first.
  await new Promise((resolve) => setImmediate(() => setImmediate(resolve)))
  // MCP's client has its answer, unslowed by Chromium's start (a client asks it when it starts, its first call comes
  // later): the browser starts now, with its whole share, beside the command line's load.
  EarlyBrowser.fullShare()
  await EarlyBrowser.begin(serve, process.env)
} else await EarlyBrowser.begin(serve, process.env)
await import("./Main/Cli.ts")
