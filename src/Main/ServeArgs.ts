/**
 * The `serve` command line as the entry reads it, before the command line's modules load (Main.ts): the flags a start
 * has, from which the early browser (EarlyBrowser.ts) and MCP's stdio front (Front.ts) decide whether to start at spawn.
 */

/** `serve`'s flags (Cli.ts), each with whether it takes a value; test/Main/Cli.integration.test.ts holds it to
 * `serve --help`. */
export const serveFlags: ReadonlyMap<string, boolean> = new Map([
  ["--config", true],
  ["--log-dir", true],
  ["--headed", false],
  ["--jsonrpc", false],
  ["--http", false],
  ["--host", true],
  ["--port", true],
  ["--token", true],
  ["--max-browsers", true],
  ["--runner", true]
])

/**
 * The flags of a `serve` command line (`serve` or no command), by name: undefined for any other command and for a
 * flag `serve` does not take, which the command line, not the entry, is to answer.
 */
export const flags = (argv: ReadonlyArray<string>): ReadonlySet<string> | undefined => {
  const seen = new Set<string>()
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string
    if (i === 0 && arg === "serve") continue
    const [flag, value] = arg.split("=", 2) as [string, string | undefined]
    const takesValue = serveFlags.get(flag)
    if (takesValue === undefined) return undefined
    if (takesValue && value === undefined) i++
    seen.add(flag)
  }
  return seen
}
