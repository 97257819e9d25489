/**
 * What the command line prints when it was called wrongly: one line on stderr naming the mistake and the nearest right
 * spelling, never the help page or a stack trace; help and the version print as effect/cli prints them.
 */
import { Console, Effect } from "effect"
import { type CliError, CliOutput, type HelpDoc } from "effect/cli"

/** Exit code of a call the command line refused (a usage error, as getopt-based tools answer it). */
export const usageExitCode = 2

/** The one name `input` most likely meant: effect/cli's nearest (edit distance ≤ 2), else the only one it begins. */
const nearest = (input: string, suggestions: ReadonlyArray<string>, names: ReadonlyArray<string>) =>
  suggestions[0] ??
  (names.filter((name) => name.startsWith(input)).length === 1
    ? names.find((name) => name.startsWith(input))
    : undefined)

const flagNames = (doc: HelpDoc.HelpDoc) =>
  doc.flags.flatMap((flag) => [
    `--${flag.name}`,
    ...flag.aliases.map((alias) => (alias.startsWith("-") ? alias : `-${alias}`))
  ])

const commandNames = (doc: HelpDoc.HelpDoc) =>
  (doc.subcommands ?? []).flatMap((group) => group.commands.map((command) => command.name))

/** A flag's type as a value of it is named in a sentence; others (a choice's values) as effect/cli says them. */
const typeNames: Record<string, string> = { integer: "an integer", number: "a number", string: "a string" }

/** What was wrong, on one line. */
export const describe = (
  error: CliError.NonShowHelpErrors,
  doc: HelpDoc.HelpDoc,
  commandPath: ReadonlyArray<string>
): string => {
  const help = `see \`${commandPath.join(" ")} --help\``
  switch (error._tag) {
    case "UnknownSubcommand": {
      const meant = nearest(error.subcommand, error.suggestions, commandNames(doc))
      return meant === undefined
        ? `unknown command "${error.subcommand}"; the commands: ${commandNames(doc).join(", ")}`
        : `unknown command "${error.subcommand}"; did you mean \`${meant}\`?`
    }
    case "UnrecognizedOption": {
      const meant = nearest(error.option, error.suggestions, flagNames(doc))
      // The command's own flag, written before the command's name: the parser read it as its parent's.
      if (meant === error.option) {
        return `${error.option} goes after the command: \`${commandPath.join(" ")} ${error.option}\``
      }
      return meant === undefined
        ? `unknown flag ${error.option}; ${help}`
        : `unknown flag ${error.option}; did you mean \`${meant}\`?`
    }
    case "MissingArgument": {
      const described = doc.args?.find((arg) => arg.name === error.argument)?.description
      return described?._tag === "Some"
        ? `missing <${error.argument}> (${sentence(described.value)}); ${help}`
        : `missing <${error.argument}>; ${help}`
    }
    case "MissingOption":
      return `missing --${error.option}; ${help}`
    case "InvalidValue": {
      const name = error.kind === "flag" ? `--${error.option}` : `<${error.option}>`
      // effect/cli says what a number's parser expected ("a string representing a finite number"): say the type.
      const type = doc.flags.find((flag) => flag.name === error.option)?.type
      const expected = typeNames[type ?? ""] ?? error.expected.replace(/^Expected:?\s*/, "")
      return error.value === ""
        ? `${name} needs a value (${expected})`
        : `${name} cannot be ${JSON.stringify(error.value)}: expected ${expected}`
    }
    default:
      return sentence(error.message.replace(/\s*\n\s*/g, " "))
  }
}

/** A description or message as the middle of a sentence: its first letter lower-case, unless a name's (`MCP`). */
const sentence = (text: string) => (/^[A-Z][a-z]/.test(text) ? text[0]!.toLowerCase() + text.slice(1) : text)

/**
 * effect/cli's presenter, but a refused call is one line on stderr: stdout may carry a protocol, and the help page
 * would bury the mistake. Help asked for (or a group command called alone) still prints the help on stdout.
 */
export const presenter: CliOutput.Presenter = {
  present: (event) => {
    if (event._tag !== "InvalidInvocation") return CliOutput.defaultPresenter.present(event)
    // The command the mistake is in: a flag's own command, else the one the parser got to.
    const first = event.errors[0]
    const path = first?._tag === "UnrecognizedOption" && first.command ? first.command : event.commandPath
    return first === undefined
      ? Effect.void
      : Console.error(`${path.join(" ")}: ${describe(first, event.helpDoc, path)}`)
  }
}
