/**
 * The workflows' commands: `takeover` (the sessions a person holds), `apply` (a job application as a durable
 * workflow), `resume` (a person done with a held session) and `cluster dev` (a local fleet on PostgreSQL).
 */
import { Console, Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as LibraryOutput from "../Logging/LibraryOutput.ts"
import { defaults } from "../Server/Defaults.ts"
import * as Cache from "./Cache.ts"
import { common, load, resolveConfig, tokenFromEnv } from "./Flags.ts"

const storeFlag = Cache.storeFlag

const takeoverList = Command.make("list", common, (flags) =>
  Effect.all([resolveConfig(flags), load(() => import("../Takeover/Takeovers.ts"))]).pipe(
    Effect.flatMap(([config, Takeovers]) => Console.log(Takeovers.listing(Takeovers.list(config.logDir))))
  )
).pipe(Command.withDescription("The sessions a person holds, in the services running on this log root"))

const takeoverShow = Command.make(
  "show",
  {
    ...common,
    session: Argument.String("session").pipe(
      Argument.optional,
      Argument.withDescription("The session (default: the only one held)")
    )
  },
  (flags) =>
    Effect.all([resolveConfig(flags), load(() => import("../Takeover/Takeovers.ts"))]).pipe(
      Effect.flatMap(([config, Takeovers]) => Takeovers.find(config.logDir, Option.getOrUndefined(flags.session))),
      Effect.flatMap((held) => Console.log(held))
    )
).pipe(Command.withDescription("The link and password that let a person into a session, and how to resume it"))

export const takeoverCommand = Command.make("takeover").pipe(
  Command.withDescription("Sessions a person holds: list them, or show the link and password for one"),
  Command.withSubcommands([takeoverList, takeoverShow])
)

const applyFlags = {
  ...common,
  job: Flag.String("job").pipe(Flag.optional, Flag.withDescription("The job posting's application page")),
  profile: Flag.String("profile").pipe(
    Flag.optional,
    Flag.withDescription("The applicant as JSON: firstName, lastName, email, phone, resume (a path), answers")
  ),
  retry: Flag.Boolean("retry").pipe(
    Flag.withDefault(false),
    Flag.withDescription("Start a new attempt of an application that failed or was cancelled")
  ),
  applications: Flag.String("applications").pipe(
    Flag.optional,
    Flag.withDescription("The applicant's applications page on the site, where a submit's fate can be read")
  ),
  status: Flag.String("status").pipe(Flag.optional, Flag.withDescription("Print run RUN's state and exit")),
  cancel: Flag.String("cancel").pipe(Flag.optional, Flag.withDescription("Cancel run RUN and exit")),
  store: storeFlag
}

export const applyCommand = Command.make("apply", applyFlags, (flags) =>
  Effect.gen(function* () {
    const [config, Apply, Store] = yield* Effect.all([
      resolveConfig(flags),
      load(() => import("../Apply/Command.ts")),
      load(() => import("../Cluster/Store.ts"))
    ])
    // stdout carries the result and JSON-RPC answers: what libraries print goes to stderr, redacted.
    LibraryOutput.install()
    yield* Apply.run(config, {
      job: Option.getOrUndefined(flags.job),
      profile: Option.getOrUndefined(flags.profile),
      retry: flags.retry,
      applications: Option.getOrUndefined(flags.applications),
      status: Option.getOrUndefined(flags.status),
      cancel: Option.getOrUndefined(flags.cancel),
      store: Store.fromEnv(process.env, Option.getOrUndefined(flags.store))
    })
  })
).pipe(
  Command.withDescription(
    "Apply to a job as a durable workflow (start-browser, analyze-form, fill-fields, upload-resume, check-captcha, submit, verify); run it again to resume after a crash, --retry to try a failed one again"
  )
)

export const resumeCommand = Command.make(
  "resume",
  {
    session: Argument.String("session").pipe(
      Argument.withDescription("The held session (apply-<id> for an application)")
    ),
    submitted: Flag.Boolean("submitted").pipe(
      Flag.withDefault(false),
      Flag.withDescription("For a submit whose fate was unknown: the site received the application")
    ),
    notSubmitted: Flag.Boolean("not-submitted").pipe(
      Flag.withDefault(false),
      Flag.withDescription("For a submit whose fate was unknown: it was not received; send it once")
    ),
    url: Flag.String("url").pipe(
      Flag.withDefault(`http://127.0.0.1:${defaults.http.port}`),
      Flag.withDescription("A running `serve --http` service, for sessions no application holds")
    ),
    token: Flag.Redacted("token").pipe(Flag.optional, Flag.withDescription("The service's bearer token")),
    store: storeFlag
  },
  (flags) =>
    Effect.gen(function* () {
      if (flags.submitted && flags.notSubmitted) {
        process.stderr.write("switchyard resume: --submitted or --not-submitted, not both\n")
        process.exitCode = 2
        return
      }
      const [Resume, Store] = yield* Effect.all([
        load(() => import("./Resume.ts")),
        load(() => import("../Cluster/Store.ts"))
      ])
      yield* Resume.run({
        session: flags.session,
        answer: flags.submitted ? "submitted" : flags.notSubmitted ? "not-submitted" : undefined,
        url: flags.url,
        token: Option.getOrUndefined(flags.token) ?? tokenFromEnv(),
        store: Store.fromEnv(process.env, Option.getOrUndefined(flags.store))
      })
    })
).pipe(
  Command.withDescription(
    "A person is done with a held session: ends a job application's wait (on this machine's store or the fleet's), or resumes a session on a running service"
  )
)

const devCommand = Command.make(
  "dev",
  {
    runners: Flag.Int("runners").pipe(Flag.withDefault(3), Flag.withDescription("Runner processes to start")),
    port: Flag.Int("port").pipe(Flag.withDefault(8931), Flag.withDescription("The first runner's MCP HTTP port")),
    maxBrowsers: Flag.Int("max-browsers").pipe(Flag.optional, Flag.withDescription("Browsers per runner")),
    uploadRoot: Flag.String("upload-root").pipe(
      Flag.atMost(64),
      Flag.withDescription("A folder the runners may upload files from (repeat for more; SWITCHYARD_UPLOAD_ROOTS)")
    ),
    install: Flag.Boolean("install-postgres").pipe(
      Flag.withDefault(true),
      Flag.withDescription("Install Debian's postgresql with apt-get when missing (as root)")
    )
  },
  (flags) =>
    load(() => import("../Cluster/Dev.ts")).pipe(
      Effect.flatMap((Dev) =>
        Dev.run({
          runners: flags.runners,
          port: flags.port,
          maxBrowsers: Option.getOrUndefined(flags.maxBrowsers),
          uploadRoots: flags.uploadRoot,
          installPostgres: flags.install
        })
      )
    )
).pipe(
  Command.withDescription(
    "Start a local PostgreSQL (on 127.0.0.1, in a temp dir) and N runners sharing it, each serving MCP over HTTP"
  )
)

export const clusterCommand = Command.make("cluster").pipe(
  Command.withDescription("A fleet of runners on PostgreSQL"),
  Command.withSubcommands([devCommand])
)
