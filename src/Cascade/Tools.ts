/**
 * The agent-facing tools, each declared once: stable name, what it is for (the text an LLM reads), argument and
 * result Schemas, and what it does. The list never changes at runtime (mask, don't remove); which engine can serve
 * a call is decided per call. Adding a tool is adding one `Tool.make` to `tools` below. (Long: each record carries
 * its own Schemas and the text an LLM reads.)
 */
import { Effect, Option, Schema } from "effect"
import { Action, ActTarget } from "../Engine/Engine.ts"
import * as FormFill from "../Engine/FormFill.ts"
import * as Instruction from "../Engine/Instruction.ts"
import * as Screenshot from "../Engine/Screenshot.ts"
import { EngineKind, EngineMode } from "../EngineId.ts"
import { SideEffect } from "../Errors/Fields.ts"
import { Dialog, InvalidInput } from "../Errors/Page.ts"
import { idleStatus } from "../Sandbox/SessionState.ts"
import { handedOff } from "./HandoffTools.ts"
import * as PageTools from "./PageTools.ts"
import * as Tool from "./Tool.ts"

const text = (description: string) => Schema.String.annotate({ description })

const noPerson = "no person can take over on this service (human takeover is not set up)"
const personHere = (now: Tool.Availability) => now.engines.some((e) => e.id.kind === "human")

// Results: what a successful call returns.
const Navigated = Schema.Struct({ url: Schema.String, title: Schema.String, status: Schema.NullOr(Schema.Number) })
const Acted = Schema.Struct({
  success: Schema.Literal(true),
  description: Schema.String,
  action: Schema.optional(Action),
  navigated: Schema.optional(Schema.Struct({ url: Schema.String, title: Schema.String })),
  /** What the page now shows for the element acted on (its value, checked state or selected options). */
  target: Schema.optional(ActTarget),
  /** The act was done and the page answered with a dialog: answer it with browser.dialog. */
  dialog: Schema.optional(Dialog)
})

/** `{ref: "e12", method?, arguments?}`: an element handed out by browser.observe or browser.extract, acted on. */
const OnReference = Schema.Struct({
  ref: text(
    'An element reference from browser.observe or browser.extract, e.g. "e12" or "f1e3" (an element in a frame).'
  ),
  method: Schema.optional(
    text("What to do: click (default), fill, type, press, check, uncheck, selectOption, hover, doubleClick.")
  ),
  arguments: Schema.optional(
    Schema.Array(Schema.String).annotate({
      description:
        "The value to fill or type, the key to press, the option to select (several options for a multi-select)."
    })
  )
})

/** The Action a call means: a reference becomes an Action whose selector is the reference. */
const actionOf = (args: typeof OnReference.Type) => ({
  selector: args.ref,
  method: args.method ?? "click",
  arguments: args.arguments ?? [],
  description: ""
})

/** Element references (`e12`, `f1e3`, `x2`, also `aria-ref=e12`) mean something only to engines that hand them out. */
const isReference = (selector: string) => /^(?:aria-ref=)?(?:(?:f\d+)?e\d+|x\d+)$/.test(selector.trim())
const Size = Schema.Struct({ width: Schema.Number, height: Schema.Number })
const Resized = Schema.Struct({ from: Size, to: Size })
const Image = Schema.Struct({
  mimeType: Schema.Literal("image/png"),
  data: Schema.optional(
    Schema.String.annotate({
      description: "The PNG, base64; on MCP the image comes as the answer's image block instead."
    })
  ),
  scaled: Schema.optional(
    Resized.annotate({ description: "The capture was larger than a model accepts and was scaled down to fit." })
  ),
  clipped: Schema.optional(
    Resized.annotate({
      description:
        "The capture was too long to scale readably and was cut to its top part: scroll and take viewport screenshots for the rest."
    })
  )
})
const Status = Schema.Struct({
  active: Schema.Boolean,
  engine: Schema.NullOr(EngineKind),
  mode: Schema.NullOr(EngineMode),
  lastUsedAt: Schema.NullOr(Schema.Number),
  idleMs: Schema.NullOr(Schema.Number),
  initializing: Schema.Boolean,
  lastError: Schema.NullOr(
    Schema.Struct({
      type: Schema.String,
      message: Schema.String,
      retryable: Schema.Boolean,
      engine: Schema.optional(EngineKind),
      action: Schema.optional(Schema.String),
      sideEffect: Schema.optional(SideEffect)
    })
  ),
  browserPid: Schema.NullOr(Schema.Number),
  wsEndpoint: Schema.NullOr(Schema.String)
})
const Closed = Schema.Struct({ status: Schema.Literal("ok") })
/** A person's takeover as the agent sees it: the link for the person, and how the browser comes back. */
const HandedOff = Schema.Struct({
  session: Schema.String,
  link: text("For the person: opens the session's browser at once; it stops working when the takeover ends."),
  url: text("The same page without the password, as the service's log shows it (noVNC asks for the password)."),
  since: Schema.String,
  reason: Schema.String,
  resume: Schema.Struct({
    tool: Schema.String,
    http: Schema.optional(Schema.String),
    cli: Schema.optional(Schema.String)
  }),
  next: Schema.String
})
const Empty = Schema.Struct({})
const Tab = Schema.Struct({
  id: Schema.String,
  index: Schema.Number,
  url: Schema.String,
  title: Schema.String,
  active: Schema.Boolean
})

/** One field of browser.fill_form. */
const FormField = Schema.Struct({
  target: Schema.optionalKey(
    text('The field\'s label or name as a person reads it: "Email", "Plan", "I agree to the terms".')
  ),
  ref: Schema.optionalKey(text('Or its reference from browser.snapshot, observe or extract: "e12".')),
  value: Schema.Union([Schema.String, Schema.Boolean, Schema.Array(Schema.String)]).annotate({
    description:
      "Text to fill; true or false for a checkbox; the option to choose for a dropdown (several for a multi-select); for radio buttons name the group as target and the option as value; file paths for a file upload."
  }),
  type: Schema.optionalKey(
    Schema.Literals(["textbox", "checkbox", "radio", "combobox", "listbox", "slider", "date", "file"]).annotate({
      description: "The kind of control, when its value does not say it (the page is looked at otherwise)."
    })
  )
})

const Filled = Schema.Struct({
  field: Schema.String,
  description: Schema.String,
  target: Schema.optional(Schema.Unknown),
  action: Schema.optional(Action)
})

/** The files an act names: an `upload … to …` sentence, or a `setInputFiles` action's arguments. */
const filesOfAct = (
  args: typeof OnReference.Type | { readonly instruction: Instruction.Said } | { readonly action: Action }
): ReadonlyArray<string> => {
  const action = "ref" in args ? actionOf(args) : "action" in args ? args.action : undefined
  if (action !== undefined) return /^(setinputfiles|upload)$/i.test(action.method) ? action.arguments : []
  if (!("instruction" in args)) return []
  const parsed = args.instruction.parsed
  return parsed._tag === "Success" && parsed.success.kind === "upload" ? parsed.success.files : []
}

const quote = (text: string) => JSON.stringify(text)

export const tools = [
  Tool.make("browser.navigate", {
    changesPage: true,
    title: "Open a URL",
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    description: "Open a URL in the session's browser. Use first, or to go to a known address.",
    args: Schema.Struct({ url: text("Absolute URL to open, including the scheme (https://…).") }),
    result: Navigated,
    onEngine: { run: (engine, { url }) => engine.navigate(url), opens: ({ url }) => url }
  }),
  Tool.make("browser.act", {
    changesPage: true,
    title: "Act on the page",
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    description:
      "Do one thing on the current page: click, type, select, check, press a key, scroll. Give one action per call, act on an element reference from browser.observe or browser.extract ({ref, method, arguments}), or replay an action from browser.observe.",
    args: Schema.Union([
      Schema.Struct({
        // Parsed here, once: the engines and the Sandbox read the parse.
        instruction: Instruction.wordsFrom(
          text(
            'One action in plain words: click "Submit", fill "Email" with "a@b.c", press Enter, scroll down; name where a target sits when several share its name: click "Apply" in "Data Engineer".'
          )
        )
      }),
      Schema.Struct({
        action: Action.annotate({ description: "An action returned by browser.observe, replayed exactly." })
      }),
      OnReference
    ]),
    result: Acted,
    onEngine: {
      run: (engine, args) =>
        engine.act("ref" in args ? actionOf(args) : "action" in args ? args.action : args.instruction),
      isAct: true,
      serves: (c, args) => ("instruction" in args ? c.instructions !== "none" : c.actions),
      tries: (c, args) =>
        !("ref" in args || ("action" in args && isReference(args.action.selector))) || c.references === true,
      untried:
        "no level of this page's cascade understands element references (they come from the playwright level's observe and extract); act by instruction instead",
      files: filesOfAct
    }
  }),
  Tool.make("browser.fill_form", {
    title: "Fill a form",
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    description:
      "Fill several fields in one call — text, dropdowns (one or several options), checkboxes, radio buttons, dates, file uploads — named by label or by reference, each done and checked as browser.act does it, in order; then submit when asked. A field that fails stops the call before anything is submitted, and the error says which field and what was done before it.",
    args: Schema.Struct({
      fields: Schema.Array(FormField)
        .check(Schema.isMinLength(1))
        .annotate({ description: "The fields, in the order a person fills them." }),
      submit: Schema.optional(
        Schema.Union([Schema.String, Schema.Boolean]).annotate({
          description:
            'Once every field is done: the button to click ("Create account"), or true to press Enter in the last text field.'
        })
      )
    }),
    result: Schema.Struct({
      success: Schema.Literal(true),
      fields: Schema.Array(Filled),
      submitted: Schema.optional(
        Schema.Struct({
          description: Schema.String,
          navigated: Schema.optional(Schema.Struct({ url: Schema.String, title: Schema.String }))
        })
      ),
      navigated: Schema.optional(Schema.Struct({ url: Schema.String, title: Schema.String }))
    }),
    onEngine: {
      run: (engine, { fields, submit }) => FormFill.fill(engine, fields, submit),
      isAct: true,
      serves: (c, { fields }) =>
        (fields.every((f) => f.ref === undefined) || c.actions) &&
        (fields.every((f) => f.target === undefined) || c.instructions !== "none"),
      tries: (c, { fields }) => fields.every((f) => f.ref === undefined) || c.references === true,
      untried:
        "no level of this page's cascade understands element references (they come from the playwright level's snapshot, observe and extract); name the fields by their labels instead",
      files: ({ fields }) => FormFill.files(fields)
    }
  }),
  Tool.make("browser.upload", {
    title: "Upload files",
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    description:
      "Put local files into a file upload on the page (a resume, attachments): name the file input, or the button or drop zone that opens the file chooser. Paths are on the service's machine, under its upload folders.",
    args: Schema.Struct({
      files: Schema.Array(Schema.String).annotate({
        description: "Paths of the files, relative to the service's working directory or absolute."
      }),
      target: text('The file input, or the button or drop zone that opens it: "Resume", "Upload your CV".')
    }),
    result: Acted,
    onEngine: {
      // The grammar puts files into an input or answers the chooser itself; other engines click, and the chooser
      // that click opens is answered with the files by the session.
      run: (engine, { files, target }) =>
        engine.act(
          Instruction.said(
            engine.capabilities.instructions === "grammar"
              ? `upload ${files.map(quote).join(", ")} to ${quote(target)}`
              : `click the ${quote(target)} file upload control`
          )
        ),
      isAct: true,
      serves: (c) => c.instructions !== "none",
      files: ({ files }) => files
    }
  }),
  Tool.make("browser.extract", {
    title: "Read the page",
    annotations: { readOnlyHint: true, openWorldHint: true },
    description:
      "Read data from the current page. With no instruction you get the page's facts, read without a model: text, headings, links and form fields with element references. With an instruction, what it asks for (a table by name comes whole, as headers and rows); with a JSON schema, an object of that shape. A long page's text is cut: the answer's `truncated` says where, and `offset` reads on from there.",
    args: Schema.Struct({
      instruction: Schema.optional(text("What to read from the page; leave out for the page's facts.")),
      schema: Schema.optional(Schema.Unknown.annotate({ description: "JSON schema the result must match." })),
      offset: Schema.optional(
        Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)).annotate({
          description: "Read the page's text from this character on: the `truncated.nextOffset` of an earlier answer."
        })
      )
    }),
    result: Schema.Unknown,
    onEngine: {
      run: (engine, { instruction, schema, offset }) =>
        engine.extract(instruction ?? "", schema, offset === undefined ? undefined : { offset }),
      serves: (c, { schema }) => schema === undefined || c.extract === "any-schema",
      // The page's facts have one shape, whatever the cascade: only the level that reads them without a model does.
      // Reading on from an offset is the model-free level's (its text is the one the offsets count in).
      tries: (c, { instruction, schema, offset }) =>
        offset !== undefined
          ? c.instructions === "grammar"
          : instruction !== undefined || schema !== undefined || c.extract === "page-facts",
      untried:
        "the page's facts (an extract without an instruction) are read by the model-free playwright level, which this page's cascade lacks; say what to read in an instruction"
    }
  }),
  Tool.make("browser.observe", {
    title: "Find page elements",
    annotations: { readOnlyHint: true, openWorldHint: true },
    description:
      "List the elements on the current page that match what you intend, as actions you can pass to browser.act. Use when unsure what to click.",
    args: Schema.Struct({
      instruction: Instruction.wordsFrom(text("What to look for: an element or the action you intend."))
    }),
    result: Schema.Array(Action),
    mask: (now) =>
      now.engines.some((e) => e.capabilities.observe) ? undefined : "no engine available now can list page elements",
    onEngine: { run: (engine, { instruction }) => engine.observe(instruction), serves: (c) => c.observe }
  }),
  ...PageTools.reading,
  Tool.make("browser.screenshot", {
    title: "Screenshot the page",
    annotations: { readOnlyHint: true, openWorldHint: false },
    description:
      "Take a PNG screenshot of the current page (viewport, or the full page). An image larger than a model accepts is scaled down or clipped, and the answer says which.",
    args: Schema.Struct({
      fullPage: Schema.optional(
        Schema.Boolean.annotate({ description: "Capture the whole page, not just the viewport." })
      )
    }),
    result: Image,
    produces: (image) => ({
      result: image,
      resources:
        image.data === undefined
          ? []
          : [{ kind: "screenshot", name: "screenshot.png", mimeType: "image/png", blob: image.data }]
    }),
    onEngine: {
      run: (engine, { fullPage }) =>
        Effect.gen(function* () {
          const png = yield* engine.screenshot({ fullPage: fullPage ?? false })
          const { png: fitted, ...resized } = yield* Screenshot.fit(png, yield* Screenshot.CurrentLimits)
          return { mimeType: "image/png" as const, data: Buffer.from(fitted).toString("base64"), ...resized }
        })
    }
  }),
  ...PageTools.onPage,
  Tool.make("browser.status", {
    outsideLane: true,
    whenNotOpen: idleStatus,
    needsStorageState: false,
    fullState: true,
    title: "Session status",
    annotations: { readOnlyHint: true, openWorldHint: false },
    description:
      "Show the session: browser, engine in use, page, which tools work right now, and a person's takeover while one lasts.",
    args: Empty,
    result: Schema.Struct({ ...Status.fields, takeover: Schema.optional(HandedOff) }),
    onSession: ({ sandbox, handoff }) =>
      Effect.all([sandbox.status, handoff.active]).pipe(
        Effect.map(([status, takeover]) =>
          Option.isSome(takeover) ? { ...status, takeover: handedOff(takeover.value) } : status
        )
      )
  }),
  Tool.make("browser.tabs", {
    needsStorageState: false,
    title: "List, switch or close tabs",
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    description:
      "The session's browser tabs. A tab the page opens (a link to another site, a sign-in popup) becomes the active tab by itself; use this to list the tabs, go back to another one, or close one (closing the active tab returns to the previous one). Every other tool works on the active tab.",
    args: Schema.Struct({
      action: Schema.Literals(["list", "switch", "close"]).annotate({
        description: "list the tabs, switch to one, or close one."
      }),
      tab: Schema.optional(
        Schema.Union([Schema.String, Schema.Number]).annotate({
          description: "The tab's id or index from the list (switch: required; close: default the active tab)."
        })
      )
    }),
    result: Schema.Struct({ tabs: Schema.Array(Tab) }),
    onSession: ({ sandbox }, { action, tab }) => {
      const done = Effect.map((tabs: ReadonlyArray<typeof Tab.Type>) => ({ tabs }))
      if (action === "list") return done(sandbox.tabs)
      if (action === "close") return done(sandbox.closeTab(tab))
      return tab === undefined
        ? Effect.fail(
            new InvalidInput({ field: "tab", message: "switch needs the tab's id or index (see the tab list)" })
          )
        : done(sandbox.switchTab(tab))
    }
  }),
  Tool.make("browser.dialog", {
    needsStorageState: false,
    title: "Answer a page dialog",
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    description:
      "Answer the alert, confirm, prompt or leave-page dialog the page opened (the state block shows it; other calls are refused until it is answered). accept: true clicks OK, false clicks Cancel.",
    args: Schema.Struct({
      accept: Schema.Boolean.annotate({ description: "true: OK / leave the page; false: Cancel / stay." }),
      promptText: Schema.optional(text("For a prompt: the text to answer with."))
    }),
    result: Schema.Struct({ answered: Dialog, accepted: Schema.Boolean }),
    mask: (now) => (Option.isSome(now.dialog) ? undefined : "no dialog is open on the page"),
    onSession: ({ sandbox }, { accept, promptText }) =>
      sandbox
        .answerDialog({ accept, ...(promptText === undefined ? {} : { promptText }) })
        .pipe(Effect.map((answered) => ({ answered, accepted: accept })))
  }),
  Tool.make("browser.close", {
    outsideLane: true,
    whenNotOpen: { status: "ok" },
    closesSession: true,
    needsStorageState: false,
    title: "Close the browser",
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    description: "Close the session's browser. The next browser call starts a fresh one.",
    args: Empty,
    result: Closed,
    onSession: ({ sandbox }) => sandbox.close.pipe(Effect.as({ status: "ok" as const }))
  }),
  Tool.make("browser.handoff", {
    outsideLane: true,
    needsStorageState: false,
    title: "Hand over to a person",
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    description:
      "Ask a person to take over the browser (CAPTCHA, login, a judgement call). Returns the link that lets them in and how to hand the browser back. Automation calls answer human_in_control until browser.resume.",
    args: Schema.Struct({ reason: text("Why a person is needed (CAPTCHA, login, a decision).") }),
    result: HandedOff,
    mask: (now) => (personHere(now) ? undefined : noPerson),
    onSession: ({ handoff }, { reason }) => handoff.handoff(reason)
  }),
  Tool.make("browser.resume", {
    outsideLane: true,
    needsStorageState: false,
    title: "Resume automation",
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    description:
      "The person is done: hand the browser back to automation after browser.handoff (or a takeover the cascade started). Their VNC connection ends.",
    args: Empty,
    result: Schema.Struct({ resumed: Schema.Boolean }),
    mask: (now) =>
      !personHere(now)
        ? noPerson
        : Option.isNone(now.takeover)
          ? "nobody has the browser: call browser.handoff first"
          : undefined,
    onSession: ({ handoff }) => handoff.resume
  })
] as const

export type ToolName = (typeof tools)[number]["name"]
/** The tools by name: what a typed call reads its tool's argument and result types from. */
export type ByName = { readonly [T in (typeof tools)[number] as T["name"]]: T }
/** What a call of the tool named `Name` takes (its arguments as sent); a name only known at run time takes anything. */
export type ArgsOf<Name extends string> = Name extends ToolName ? ByName[Name]["args"]["Encoded"] : unknown
/** What a successful call of the tool named `Name` returns; a name only known at run time returns `unknown`. */
export type ResultOf<Name extends string> = Name extends ToolName ? ByName[Name]["result"]["Type"] : unknown
export const toolNames: ReadonlyArray<ToolName> = tools.map((tool) => tool.name)

/** Both spellings of each name: `browser.navigate` and `browser_navigate`. */
const byName: ReadonlyMap<string, Tool.Any> = new Map(
  tools.flatMap((tool) => [
    [tool.name, tool],
    [tool.underscoreName, tool]
  ])
)
export const isToolName = (name: string): name is ToolName => tools.some((tool) => tool.name === name)
/** The tool of that name (either spelling), if there is one. */
export const find = (name: string): Option.Option<Tool.Any> => Option.fromNullishOr(byName.get(name))
