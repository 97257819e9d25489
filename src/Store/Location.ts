/**
 * Where the store is: PostgreSQL when a URL names one (a fleet shares it), else an embedded SQLite file for one
 * machine. Read from the environment the same way by the fleet and by the service's named storage states.
 */
import { homedir } from "node:os"
import { join, resolve } from "node:path"
import { Redacted } from "effect"
import * as Shell from "../Shell.ts"

export type StoreOptions =
  | { readonly kind: "postgres"; readonly url: Redacted.Redacted }
  | { readonly kind: "embedded"; readonly file: string }

/** The embedded store's file when nothing names another. */
const defaultFile = () => join(homedir(), ".switchyard", "store.db")

/** `DATABASE_URL` (or `SWITCHYARD_DATABASE_URL`) names PostgreSQL; otherwise `SWITCHYARD_STORE` or the default file. */
export const fromEnv = (env: NodeJS.ProcessEnv = process.env, file?: string): StoreOptions => {
  const url = env.SWITCHYARD_DATABASE_URL ?? env.DATABASE_URL
  if (url !== undefined && url !== "") return { kind: "postgres", url: Redacted.make(url) }
  return { kind: "embedded", file: file ?? env.SWITCHYARD_STORE ?? defaultFile() }
}

/** A word as a POSIX shell reads it back: quoted only when it must be. */
/**
 * What a command printed for a person to type must add to reach this store from another shell: ` --store FILE` (the
 * absolute path) for an embedded file other than the default, which a shell without the flag or `SWITCHYARD_STORE`
 * would look in and miss the run; nothing for the default file, nor for PostgreSQL, whose `DATABASE_URL` (with its
 * password) is the person's to set, as they did for the command that printed it.
 */
export const flagFor = (options: StoreOptions): string =>
  options.kind === "embedded" && resolve(options.file) !== defaultFile()
    ? ` --store ${Shell.word(resolve(options.file))}`
    : ""

/** What a person sees: the file, or the database with its password left out. */
export const describe = (options: StoreOptions) => {
  if (options.kind === "embedded") return `embedded SQLite at ${options.file}`
  try {
    const url = new URL(Redacted.value(options.url))
    return `PostgreSQL at ${url.hostname}:${url.port || 5432}${url.pathname}`
  } catch {
    return "PostgreSQL"
  }
}
