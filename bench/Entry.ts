/**
 * The file the bench starts the service from: the bundled entry bin/switchyard runs (scripts/bundle.ts, built here
 * through the same bootstrap function when a source changed), so every figure is of the service as users start it.
 */
import { execFileSync } from "node:child_process"
import { join } from "node:path"

const root = join(import.meta.dirname, "..")

/** The service's entry from source, what tests start and what ran before the bundled entry. */
export const source = join(root, "src", "Main.ts")

let built: string | undefined

/** The bundled entry's path (built on first use when stale), or the source entry when it cannot be built. */
export const bundled = (): string => {
  built ??=
    execFileSync("bash", ["-c", 'source "$1/scripts/bootstrap.sh" && ensure_bundle', "bash", root], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"]
    }).trim() || source
  return built
}
