/**
 * The self-improvement loop on the command line: `scenarios run` (suite → report → regression gate),
 * `scenarios import` (a production trace becomes a scenario) and `analyze` (a log root becomes a report).
 * Exit codes: 0 pass, 1 regression, 2 bad input (suite, baseline, paths).
 */
import { join } from "node:path"
import { Console, Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as AttemptLog from "../Logging/AttemptLog.ts"
import * as Regression from "./Regression.ts"

// Loaded when their command runs, so the service's start does not load the scenario runner and its engines.
const Runner = () => Effect.promise(() => import("./Runner.ts"))
const Report = () => Effect.promise(() => import("./Report.ts"))
const Sampling = () => Effect.promise(() => import("./Sampling.ts"))

/** A refused call on one line, named by its command as the command line names its own refusals. */
const fail = (command: string) => (message: string) =>
  Effect.sync(() => {
    process.stderr.write(`switchyard ${command}: ${message}\n`)
    process.exitCode = 2
  })

const defaultLogs = () => join(AttemptLog.defaultRoot(), "scenarios")

const run = Command.make(
  "run",
  {
    suite: Argument.String("suite").pipe(Argument.withDescription("Suite file, e.g. scenarios/suite.json")),
    repeat: Flag.Int("repeat").pipe(Flag.withDefault(1), Flag.withDescription("Runs per scenario (pass^k)")),
    logDir: Flag.String("log-dir").pipe(
      Flag.optional,
      Flag.withDescription("Where traces go (default <log root>/scenarios)")
    ),
    model: Flag.Literals("model", ["scripted", "env"]).pipe(
      Flag.optional,
      Flag.withDescription("scripted: the bundled offline model; env: real providers from the environment")
    ),
    only: Flag.String("only").pipe(Flag.optional, Flag.withDescription("Comma-separated scenario names")),
    concurrency: Flag.Int("concurrency").pipe(Flag.withDefault(1), Flag.withDescription("Runs at once")),
    baseline: Flag.String("baseline").pipe(
      Flag.optional,
      Flag.withDescription("Baseline file (default beside the suite)")
    ),
    updateBaseline: Flag.Boolean("update-baseline").pipe(
      Flag.withDefault(false),
      Flag.withDescription("Accept this run")
    )
  },
  (flags) =>
    Effect.gen(function* () {
      const report = yield* (yield* Runner()).runSuite({
        suite: flags.suite,
        repeat: flags.repeat,
        logDir: Option.getOrElse(flags.logDir, defaultLogs),
        concurrency: flags.concurrency,
        ...(Option.isSome(flags.model) ? { model: flags.model.value } : {}),
        ...(Option.isSome(flags.only) ? { only: flags.only.value.split(",").map((s) => s.trim()) } : {})
      })
      const baseline = Option.getOrElse(flags.baseline, () => Regression.baselinePathFor(flags.suite))
      const verdict = yield* Regression.gate({
        baseline,
        stats: report.stats,
        suite: report.suite,
        repeat: report.repeat,
        scenarios: report.scenarios.map((s) => ({ name: s.name, passes: s.passes, runs: s.runs.length })),
        update: flags.updateBaseline
      })
      yield* Console.log(Regression.format(verdict, baseline))
      if (!verdict.ok) process.exitCode = 1
    }).pipe(
      Effect.catchTags({
        SuiteError: (e) => fail("scenarios run")(e.message),
        RunError: (e) => fail("scenarios run")(e.message),
        RegressionError: (e) => fail("scenarios run")(e.message)
      })
    )
).pipe(Command.withDescription("Run a scenario suite through the full stack, report pass^k, and check for regressions"))

const importCommand = Command.make(
  "import",
  {
    trace: Argument.String("traceDir").pipe(
      Argument.withDescription("A logged trace: …/browser-automation/DAY/<traceId>")
    ),
    out: Flag.String("out").pipe(Flag.withDefault("scenarios/imported"), Flag.withDescription("File or directory")),
    name: Flag.String("name").pipe(Flag.optional, Flag.withDescription("Scenario name"))
  },
  (flags) =>
    Sampling().pipe(
      Effect.flatMap((Sampling) =>
        Sampling.importTrace(flags.trace, {
          out: flags.out,
          ...(Option.isSome(flags.name) ? { name: flags.name.value } : {})
        })
      ),
      Effect.flatMap((imported) =>
        Console.log(
          `wrote ${imported.file ?? "(nothing)"}${imported.notes.length > 0 ? `\nnotes:\n  ${imported.notes.join("\n  ")}` : ""}`
        )
      ),
      Effect.catchTag("ImportError", (e) => fail("scenarios import")(`${e.path}: ${e.message}`))
    )
).pipe(Command.withDescription("Turn a logged trace into a scenario (redacted) so a real failure joins the suite"))

export const scenarios = Command.make("scenarios").pipe(
  Command.withDescription("The scenario suite: run it, or import production traces into it"),
  Command.withSubcommands([run, importCommand])
)

export const analyze = Command.make(
  "analyze",
  {
    logs: Flag.String("logs").pipe(Flag.optional, Flag.withDescription("Log root to read (default the service's)")),
    out: Flag.String("out").pipe(
      Flag.withDefault("docs/ops/browser-automation-report.md"),
      Flag.withDescription("Markdown report; the HTML report goes beside it")
    )
  },
  (flags) =>
    Report().pipe(
      Effect.flatMap((Report) =>
        Report.write({ logs: Option.getOrElse(flags.logs, AttemptLog.defaultRoot), out: flags.out })
      ),
      Effect.flatMap((result) => Console.log(result.markdown.split("\n").slice(0, 30).join("\n"))),
      Effect.catchTag("AnalyzeError", (e) => fail("analyze")(`${e.path}: ${e.message}`))
    )
).pipe(Command.withDescription("Read attempt logs from any log root and write the Markdown and HTML reports"))
