/**
 * How a setting's value is read, in plain code: the words that turn it on or off, and which source's value holds. The
 * configuration (Server/Config/Sources.ts) reads every setting so; the early browser its few, before effect loads.
 */

export type Env = Record<string, string | undefined>

const on = /^(1|true|on|yes)$/i
const off = /^(0|false|off|no)$/i

/** `1|true|on|yes` is on and `0|false|off|no` off, in any case; any other word, or none, is neither. */
export const onOff = (word: string | undefined): boolean | undefined =>
  word === undefined ? undefined : on.test(word) ? true : off.test(word) ? false : undefined

/** A setting's sources, the first that sets it holding: the command line, then the environment, then the file. */
export const byPrecedence = <S>(sources: { readonly flags: S; readonly env: S; readonly file: S }) =>
  [sources.flags, sources.env, sources.file] as const

/** The environment name that sets a setting: the first of its names holding more than blanks. */
export const nameSet = (env: Env, names: ReadonlyArray<string>) => names.find((name) => env[name]?.trim())

/** The value at `path` in plain data; an `opaque` value is not looked into. */
export const valueAt = (
  root: unknown,
  path: ReadonlyArray<string | number>,
  opaque: (value: object) => boolean = () => false
): unknown =>
  path.reduce<unknown>(
    (value, segment) =>
      typeof value === "object" && value !== null && !opaque(value)
        ? Object.getOwnPropertyDescriptor(value, segment)?.value
        : undefined,
    root
  )

/**
 * A setting's value as the configuration holds it when no flag sets it: the environment's, else the one at its key in
 * the file's JSON, spelt as the environment spells it (`true`, `3`); undefined when neither sets it.
 */
export const word = (
  setting: { readonly key: string; readonly env: ReadonlyArray<string> },
  env: Env,
  file?: unknown
): string | undefined => {
  const name = nameSet(env, setting.env)
  const inFile = valueAt(file, setting.key.split("."))
  return byPrecedence({
    flags: undefined,
    env: name === undefined ? undefined : env[name],
    file: inFile === undefined || inFile === null || typeof inFile === "object" ? undefined : String(inFile)
  }).find((value) => value !== undefined)
}
