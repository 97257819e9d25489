/**
 * The command line as a person types it, through the real `bin/switchyard`: every command's help, and a mistake in
 * any of them (an unknown or misspelt command or flag, a missing argument, a missing or mistyped value) refused on one
 * line that names the nearest right spelling, with exit code 2, nothing on stdout and nothing started.
 */
import { spawn } from "node:child_process"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { serveFlags } from "../../src/Main/ServeArgs.ts"
import { type Outcome, outcomeOf } from "../support/Command.ts"

const bin = join(import.meta.dirname, "..", "..", "bin", "switchyard")

const switchyard = (args: ReadonlyArray<string>) =>
  Effect.callback<Outcome>((resume) => {
    const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] })
    void outcomeOf(child).then((outcome) => resume(Effect.succeed(outcome)))
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/** A command's help, read the way a person reads it: its subcommands, its flags and its required arguments. */
const readHelp = (help: string) => {
  /** A section's lines, trimmed: `--port integer    HTTP port …`. */
  const section = (name: string) => {
    const start = help.indexOf(`\n${name}\n`)
    if (start === -1) return []
    const body = help.slice(start + name.length + 2).split("\n\n")[0] ?? ""
    return body
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "")
  }
  const firstWord = (line: string) => line.split(/\s+/)[0]!
  return {
    subcommands: section("SUBCOMMANDS").map(firstWord),
    flags: section("FLAGS").map(firstWord),
    /** Each flag with whether it takes a value (`--port integer`) or not (`--headed`, followed by its description). */
    takesValue: new Map(
      section("FLAGS").map((line) => [firstWord(line), /^\S+ (string|integer|number|<)/.test(line)] as const)
    ),
    required: section("ARGUMENTS")
      .filter((line) => !line.endsWith("(optional)"))
      .map(firstWord)
  }
}

const refusedOnOneLine = (ran: Outcome, what: string) => {
  assert.strictEqual(ran.code, 2, `${what}: exit code (stderr: ${ran.stderr})`)
  assert.strictEqual(ran.stdout, "", `${what}: nothing on stdout, which may carry a protocol`)
  const lines = ran.stderr.trimEnd().split("\n")
  assert.strictEqual(lines.length, 1, `${what}: one line, got:\n${ran.stderr}`)
  assert.notMatch(ran.stderr, /\bat .*:\d+:\d+|~effect|ShowHelp|Error:/, `${what}: no stack frames or internals`)
  return lines[0]!
}

describe("the switchyard command line", () => {
  it.live(
    "refuses an unknown flag on every command, a misspelt command, a missing argument and a bad value with exit 2; --help still helps",
    () =>
      Effect.gen(function* () {
        // Every command, found the way a person finds them: from the root's help down.
        const commands: Array<{ path: ReadonlyArray<string>; help: ReturnType<typeof readHelp> }> = []
        let level: ReadonlyArray<ReadonlyArray<string>> = [[]]
        while (level.length > 0) {
          const helped = yield* Effect.forEach(level, (path) => switchyard([...path, "--help"]), { concurrency: 3 })
          const next: Array<ReadonlyArray<string>> = []
          for (const [i, ran] of helped.entries()) {
            const path = level[i]!
            const name = ["switchyard", ...path].join(" ")
            assert.strictEqual(ran.code, 0, `${name} --help exits 0 (stderr: ${ran.stderr})`)
            assert.include(ran.stdout, `USAGE\n  ${name}`, `${name} --help prints its usage`)
            const help = readHelp(ran.stdout)
            commands.push({ path, help })
            next.push(...help.subcommands.map((sub) => [...path, sub]))
          }
          level = next
        }
        const names = commands.map((c) => c.path.join(" "))
        for (const expected of ["", "serve", "status", "demo", "apply", "resume", "cluster dev", "takeover show"]) {
          assert.include(names, expected, "the walk reached every command")
        }

        const mistakes = commands.flatMap(({ path, help }) => {
          const name = ["switchyard", ...path].join(" ")
          const flag = help.flags[0]
          const sub = help.subcommands[0]
          return [
            // A flag no command has.
            {
              args: [...path, "--no-such-flag"],
              expect: new RegExp(`^${name}: unknown flag --no-such-flag; see \`${name} --help\`$`)
            },
            // A real flag, misspelt: its last letter left off.
            ...(flag === undefined
              ? []
              : [
                  {
                    args: [...path, flag.slice(0, -1)],
                    expect: `${name}: unknown flag ${flag.slice(0, -1)}; did you mean \`${flag}\`?`
                  }
                ]),
            // A real subcommand, misspelt.
            ...(sub === undefined
              ? []
              : [
                  {
                    args: [...path, sub.slice(0, -1)],
                    expect: `${name}: unknown command "${sub.slice(0, -1)}"; did you mean \`${sub}\`?`
                  }
                ]),
            // Each required argument, left out.
            ...help.required.map((argument) => ({
              args: [...path],
              expect: new RegExp(`^${name}: missing <${argument}>`)
            }))
          ]
        })
        mistakes.push(
          { args: ["resmue"], expect: 'switchyard: unknown command "resmue"; did you mean `resume`?' },
          // A flag's value left out, or not of its type.
          { args: ["serve", "--port"], expect: "switchyard serve: --port needs a value (an integer)" },
          { args: ["status", "--store"], expect: "switchyard status: --store needs a value (a string)" },
          {
            args: ["cluster", "dev", "--runners", "three"],
            expect: 'switchyard cluster dev: --runners cannot be "three": expected an integer'
          },
          {
            args: ["scenarios", "run", "suite.json", "--model", "gpt"],
            expect: 'switchyard scenarios run: --model cannot be "gpt": expected "scripted" | "env"'
          },
          // What a command's own checks refuse: flags it needs together, a value out of range.
          { args: ["apply", "--job", "http://127.0.0.1/"], expect: /^switchyard apply: --job and --profile / },
          {
            args: ["scenarios", "run", "--repeat", "0", "suite.json"],
            expect: /^switchyard scenarios run: repeat must be ≥ 1/
          }
        )
        const answers = yield* Effect.forEach(mistakes, ({ args }) => switchyard(args), { concurrency: 3 })
        for (const [i, ran] of answers.entries()) {
          const { args, expect } = mistakes[i]!
          const what = `switchyard ${args.join(" ")}`
          const line = refusedOnOneLine(ran, what)
          if (typeof expect === "string") assert.strictEqual(line, expect, what)
          else assert.match(line, expect, what)
        }
        assert.isTrue(
          mistakes.some((m) => m.args.join(" ") === "resume"),
          "resume's missing <session> was tried"
        )
      }),
    300_000
  )

  it.live(
    "the flags the entry reads before the command line loads are serve's own, each taking a value as serve's do",
    () =>
      Effect.gen(function* () {
        // The entry decides from them whether to start a browser and MCP's front at spawn: a flag it does not know stops
        // both, and one it reads wrongly (a value taken for a flag) starts what the command line then refuses.
        const ran = yield* switchyard(["serve", "--help"])
        assert.strictEqual(ran.code, 0, ran.stderr)
        assert.deepStrictEqual(
          [...serveFlags].sort(([a], [b]) => a.localeCompare(b)),
          [...readHelp(ran.stdout).takesValue].sort(([a], [b]) => a.localeCompare(b))
        )
      })
  )
})
