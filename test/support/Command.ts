/**
 * What a command a test ran said and how it ended: its stdout and stderr collected until it exits, read the way a
 * person at a terminal reads them.
 */
import type { ChildProcessByStdio } from "node:child_process"
import type { Readable } from "node:stream"

export interface Outcome {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Resolves when `child` exits, with its exit code and everything it wrote. */
export const outcomeOf = (child: ChildProcessByStdio<null, Readable, Readable>) =>
  new Promise<Outcome>((resolve) => {
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (c) => {
      stdout += String(c)
    })
    child.stderr.on("data", (c) => {
      stderr += String(c)
    })
    child.once("exit", (code) => resolve({ code, stdout, stderr }))
  })
