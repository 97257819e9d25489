/**
 * A throwaway PostgreSQL for trying the fleet on one machine and for tests: Debian's `postgresql` binaries, a data
 * directory in a temp dir, listening on 127.0.0.1 only, run as a child that dies with this process (parent-death
 * signal), stopped and removed when the scope closes. As root it runs as the `postgres` user, as PostgreSQL requires.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Redacted } from "effect"
import { NotConfigured } from "../Errors/Engine.ts"

export interface LocalPostgres {
  readonly url: Redacted.Redacted
  readonly port: number
  readonly dir: string
  readonly pid: number
}

/** Debian installs each major under /usr/lib/postgresql/<major>/bin; the newest is used. */
export const binDir = (): string | undefined => {
  const root = "/usr/lib/postgresql"
  if (!existsSync(root)) return undefined
  const majors = readdirSync(root)
    .filter((m) => existsSync(join(root, m, "bin", "postgres")))
    .sort((a, b) => Number(b) - Number(a))
  return majors[0] === undefined ? undefined : join(root, majors[0], "bin")
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

const asPostgres = (): { uid: number; gid: number } | undefined => {
  if (process.getuid?.() !== 0) return undefined
  const line = execFileSync("getent", ["passwd", "postgres"], { encoding: "utf8" }).trim().split(":")
  return { uid: Number(line[2]), gid: Number(line[3]) }
}

const ready = async (port: number, child: ChildProcess, logs: () => string) => {
  const { Socket } = await import("node:net")
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`postgres exited: ${logs()}`)
    const ok = await new Promise<boolean>((resolve) => {
      const socket = new Socket()
      socket.once("connect", () => {
        socket.destroy()
        resolve(true)
      })
      socket.once("error", () => resolve(false))
      socket.connect(port, "127.0.0.1")
    })
    // Listening is not accepting: the server takes queries once its startup log says so.
    if (ok && /ready to accept connections/.test(logs())) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`postgres did not start: ${logs()}`)
}

/** Starts PostgreSQL in a new temp dir; the scope's end stops it and removes the dir. */
export const start = Effect.acquireRelease(
  Effect.tryPromise({
    try: async () => {
      const bin = binDir()
      if (bin === undefined) {
        throw new Error("PostgreSQL is not installed: apt-get install -y postgresql (Debian) provides it")
      }
      const user = asPostgres()
      // The postgres user must reach its directory: a root-only TMPDIR (as test runners make) is skipped for /tmp.
      const dir = mkdtempSync(join(user ? "/tmp" : tmpdir(), "switchyard-pg-"))
      if (user) chownSync(dir, user.uid, user.gid)
      const runAs = (command: string, args: Array<string>) =>
        user
          ? ([
              "setpriv",
              [
                `--reuid=${user.uid}`,
                `--regid=${user.gid}`,
                "--clear-groups",
                "--pdeathsig",
                "SIGKILL",
                command,
                ...args
              ]
            ] as const)
          : ([command, args] as const)
      const data = join(dir, "data")
      const [initCmd, initArgs] = runAs(join(bin, "initdb"), ["-A", "trust", "-U", "postgres", "-D", data])
      execFileSync(initCmd, [...initArgs], { stdio: "ignore", cwd: dir })
      const port = await freePort()
      const [cmd, args] = runAs(join(bin, "postgres"), [
        "-D",
        data,
        "-p",
        String(port),
        "-k",
        dir,
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "fsync=off",
        "-c",
        "max_connections=200"
      ])
      const child = spawn(cmd, [...args], { stdio: ["ignore", "ignore", "pipe"], cwd: dir })
      let log = ""
      child.stderr?.on("data", (chunk) => {
        log = (log + String(chunk)).slice(-8_000)
      })
      await ready(port, child, () => log)
      return {
        child,
        pg: {
          url: Redacted.make(`postgres://postgres@127.0.0.1:${port}/postgres`),
          port,
          dir,
          pid: child.pid ?? 0
        } satisfies LocalPostgres
      }
    },
    catch: (cause) =>
      new NotConfigured({
        message: `cannot start a local PostgreSQL: ${cause instanceof Error ? cause.message : cause}`
      })
  }),
  ({ child, pg }) =>
    Effect.promise(async () => {
      if (child.exitCode === null) {
        // SIGINT is PostgreSQL's fast shutdown: clients are disconnected, nothing waits for them.
        const exited = new Promise((resolve) => child.once("exit", resolve))
        child.kill("SIGINT")
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))])
        if (child.exitCode === null) child.kill("SIGKILL")
      }
      for (let i = 0; i < 20; i++) {
        try {
          rmSync(pg.dir, { recursive: true, force: true })
          return
        } catch {
          await new Promise((r) => setTimeout(r, 100))
        }
      }
    })
).pipe(Effect.map(({ pg }) => pg))
