/**
 * Where settings come from: how one is declared (its key in the file, its environment names, how its value is
 * read), and the environment and the command line as ConfigProviders answering at a setting's key.
 */
import { Config, ConfigProvider, Effect, Option, Redacted, Schema, SchemaTransformation } from "effect"
import * as Model from "../../Engine/Model.ts"
import * as Setting from "../../Setting.ts"

export type Path = ConfigProvider.Path
export type Env = Setting.Env
/** How a value is read at a path: as the environment spells it (a file's JSON numbers and booleans become strings). */
export type Read<A> = (path: Path) => Config.Config<A>

const isWhole = (s: string) => s.trim() !== "" && Number.isInteger(Number(s)) && Number(s) >= 0
const WholeNumber = (min: 0 | 1) =>
  Schema.String.check(
    Schema.makeFilter(isWhole, { message: "is not a whole number" }, true),
    Schema.makeFilter((s: string) => Number(s) >= min, { message: `is not above ${min - 1}` })
  ).pipe(Schema.decodeTo(Schema.Int, SchemaTransformation.numberFromString))
const OnOff = Schema.String.check(
  Schema.makeFilter((s: string) => Setting.onOff(s) !== undefined, { message: "is not on/off" })
).pipe(
  Schema.decodeTo(
    Schema.Boolean,
    SchemaTransformation.transform<boolean, string>({
      decode: (s) => Setting.onOff(s) === true,
      encode: (b) => (b ? "on" : "off")
    })
  )
)

export const text: Read<string> = (path) => Config.schema(Schema.String, path)
/** A secret is `Redacted` from the moment it is read. */
export const secret: Read<Redacted.Redacted<string>> = (path) =>
  Config.schema(Schema.RedactedFromValue(Schema.String), path)
/** A JSON array, or a comma-separated list. */
export const list: Read<ReadonlyArray<string>> = (path) => Config.Array(Schema.Trim, path, { separator: "," })
export const whole =
  (min: 0 | 1): Read<number> =>
  (path) =>
    Config.schema(WholeNumber(min), path)
/** `1|true|on|yes` or `0|false|off|no`, in any case. */
export const onOff: Read<boolean> = (path) => Config.schema(OnOff, path)
export const oneOf =
  <const L extends ReadonlyArray<string>>(literals: L): Read<L[number]> =>
  (path) =>
    Config.schema(Schema.Literals(literals).annotate({ message: `is not one of ${literals.join(", ")}` }), path)

/** Each setting's environment names, first one set wins; filled as settings are declared. */
const environment = new Map<string, ReadonlyArray<string>>()

const declare = <A>(key: string, env: ReadonlyArray<string>, read: Read<A>) => {
  environment.set(key, env)
  return read(key.split("."))
}
/** A setting: its key in the file (dotted), its environment names, how it is read, its default. */
export const setting = <A>(key: string, env: ReadonlyArray<string>, read: Read<A>, fallback: A) =>
  declare(key, env, read).pipe(Config.withDefault(fallback))
/** A setting nothing defaults: `undefined` when unset. */
export const optional = <A>(key: string, env: ReadonlyArray<string>, read: Read<A>) =>
  Config.option(declare(key, env, read)).pipe(Config.map(Option.getOrUndefined))

/** The environment names that may set the setting at `path`; model keys and base URLs are named by Model.ts. */
const namesOf = (path: Path): ReadonlyArray<string> => {
  const [section, field, name] = path
  if (section === "model" && path.length === 3 && typeof name === "string") {
    if (field === "apiKeys") return Model.apiKeyEnv(name)
    if (field === "baseURLs") return Model.baseURLEnv(name)
  }
  return environment.get(path.join(".")) ?? []
}
/** The name that sets `path` in `env`, if any does. */
export const nameSet = (env: Env, path: Path) => Setting.nameSet(env, namesOf(path))

/** The environment as a provider of settings: each setting's key is read under its names. */
export const fromEnvironment = (env: Env) => {
  const source = ConfigProvider.fromEnvRecord(env)
  return ConfigProvider.make((path) =>
    Effect.gen(function* () {
      const name = nameSet(env, path)
      if (name !== undefined) return yield* source.load([name])
      // Attaching is implied by the attach settings' own names.
      if (path.join(".") !== "browser.provider") return undefined
      if (env.SWITCHYARD_CDP_URL) return ConfigProvider.makeValue("cdp")
      if (env.ADSPOWER_API_URL && env.SWITCHYARD_ADSPOWER_USER_ID) return ConfigProvider.makeValue("adspower")
      return undefined
    })
  )
}

/** What the command line sets, in the file's shape; a `Redacted` flag stays so until Config reads it. */
export interface Flags {
  readonly [key: string]: string | number | boolean | Redacted.Redacted<string> | Flags | undefined
}

/** The value at `path` in plain data (a `Redacted` one is not opened). */
export const valueAt = (root: unknown, path: Path): unknown => Setting.valueAt(root, path, Redacted.isRedacted)

/** The command line as a provider of settings; like `fromUnknown`, but a `Redacted` flag is opened only here. */
export const fromFlags = (flags: Flags) =>
  ConfigProvider.make((path) =>
    Effect.sync(() => {
      const value = valueAt(flags, path)
      const opened = Redacted.isRedacted(value) ? String(Redacted.value(value)) : value
      if (opened === undefined || opened === null || opened === "") return undefined
      if (typeof opened === "object") return ConfigProvider.makeRecord(new Set(Object.keys(opened)))
      return ConfigProvider.makeValue(String(opened))
    })
  )
