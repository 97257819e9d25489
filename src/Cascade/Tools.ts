/**
 * The agent-facing tools, each declared once: stable name, what it is for (the text an LLM reads), argument and
 * result Schemas, and what it does. The list never changes at runtime (mask, don't remove); which engine can serve
 * a call is decided per call. Adding a tool is adding one `Tool.make` to `tools` below.
 */
import { Effect, Option, Schema } from "effect"
import { Action } from "../Engine/Engine.ts"
import { EngineKind, EngineMode } from "../Engine/EngineId.ts"
import * as FormFill from "../Engine/FormFill.ts"
import * as Instruction from "../Engine/Instruction.ts"
import { Unsupported } from "../Errors/Engine.ts"
import { SideEffect } from "../Errors/Fields.ts"
import { Dialog, InvalidInput } from "../Errors/Page.ts"
import { defaultRedactor } from "../Logging/Redact.ts"
import * as Pdf from "../Sandbox/Pdf.ts"
import * as StorageState from "../Sandbox/StorageState.ts"
import * as Viewport from "../Sandbox/Viewport.ts"
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
      description: "The value to fill or type, the key to press, the option to select."
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
const Image = Schema.Struct({
  mimeType: Schema.Literal("image/png"),
  data: Schema.optional(
    Schema.String.annotate({
      description: "The PNG, base64; on MCP the image comes as the answer's image block instead."
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
  args: typeof OnReference.Type | { readonly instruction: string } | { readonly action: Action }
): ReadonlyArray<string> => {
  const action = "ref" in args ? actionOf(args) : "action" in args ? args.action : undefined
  if (action !== undefined) return /^(setinputfiles|upload)$/i.test(action.method) ? action.arguments : []
  if (!("instruction" in args)) return []
  const parsed = Instruction.parse(args.instruction)
  return parsed._tag === "Success" && parsed.success.kind === "upload" ? parsed.success.files : []
}

const quote = (text: string) => JSON.stringify(text)

const referencesHere = (now: Tool.Availability) =>
  now.engines.some((e) => e.capabilities.references === true)
    ? undefined
    : "no engine available now hands out element references (the playwright level does)"
const untriedWithoutReferences =
  "no level of this page's cascade hands out element references (the playwright level does)"

const defaultWaitMs = 10_000
const waitLimit = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 120_000 })).annotate({
  description: `How long to wait at most, in milliseconds; default ${defaultWaitMs}, at most 120000.`
})

/** Why work on the page without an engine cannot run now: a person has the browser, or a dialog waits. */
const pageBlocked = (now: Tool.Availability) =>
  Option.isSome(now.takeover)
    ? `a person has the browser (${now.takeover.value.url}); wait for them, or call browser.resume when they are done`
    : Option.isSome(now.dialog)
      ? `a ${now.dialog.value.type} dialog is open on the page; answer it with browser.dialog first`
      : undefined

const StateSummary = Schema.Struct({
  name: Schema.String,
  savedAt: Schema.String,
  cookies: Schema.Number,
  origins: Schema.Number
})

const CookieParam = Schema.Struct({
  name: Schema.String,
  value: Schema.String,
  url: Schema.optionalKey(text("A URL the cookie is for (sets its domain and path).")),
  domain: Schema.optionalKey(Schema.String),
  path: Schema.optionalKey(Schema.String),
  expires: Schema.optionalKey(
    Schema.Number.annotate({ description: "Seconds since the epoch; absent: a session cookie." })
  ),
  httpOnly: Schema.optionalKey(Schema.Boolean),
  secure: Schema.optionalKey(Schema.Boolean),
  sameSite: Schema.optionalKey(Schema.Literals(["Strict", "Lax", "None"]))
})

/** Answers of the default size stay well inside a model's context: about 5,000 tokens. */
export const defaultSnapshotBytes = 20_000

const Snapshot = Schema.Struct({
  url: Schema.String,
  title: Schema.String,
  snapshot: Schema.String.annotate({
    description:
      'One line per node, indented by depth: - role "name" [ref=e12] [checked]: value. Groups, forms, rows, dialogs and landmarks hold what is in them.'
  }),
  truncated: Schema.optional(
    Schema.Struct({
      totalBytes: Schema.Number,
      collapsed: Schema.Number,
      hiddenLines: Schema.Number,
      how: Schema.String
    }).annotate({ description: "What the byte budget left out, and how to get it." })
  ),
  changes: Schema.optional(
    Schema.Union([
      Schema.Struct({ added: Schema.Number, removed: Schema.Number, changed: Schema.Number }),
      Schema.String
    ])
  ),
  found: Schema.optional(Schema.Number)
})

export const tools = [
  Tool.make("browser.navigate", {
    title: "Open a URL",
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    description: "Open a URL in the session's browser. Use first, or to go to a known address.",
    args: Schema.Struct({ url: text("Absolute URL to open, including the scheme (https://…).") }),
    result: Navigated,
    onEngine: { run: (engine, { url }) => engine.navigate(url), opens: ({ url }) => url }
  }),
  Tool.make("browser.act", {
    title: "Act on the page",
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    description:
      "Do one thing on the current page: click, type, select, check, press a key, scroll. Give one action per call, act on an element reference from browser.observe or browser.extract ({ref, method, arguments}), or replay an action from browser.observe.",
    args: Schema.Union([
      Schema.Struct({
        instruction: text(
          'One action in plain words: click "Submit", fill "Email" with "a@b.c", press Enter, scroll down.'
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
          engine.capabilities.instructions === "grammar"
            ? `upload ${files.map(quote).join(", ")} to ${quote(target)}`
            : `click the ${quote(target)} file upload control`
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
      "Read data from the current page. With no instruction you get the page's facts, read without a model: text, headings, links and form fields with element references. With an instruction, what it asks for; with a JSON schema, an object of that shape.",
    args: Schema.Struct({
      instruction: Schema.optional(text("What to read from the page; leave out for the page's facts.")),
      schema: Schema.optional(Schema.Unknown.annotate({ description: "JSON schema the result must match." }))
    }),
    result: Schema.Unknown,
    onEngine: {
      run: (engine, { instruction, schema }) => engine.extract(instruction ?? "", schema),
      serves: (c, { schema }) => schema === undefined || c.extract === "any-schema",
      // The page's facts have one shape, whatever the cascade: only the level that reads them without a model does.
      tries: (c, { instruction, schema }) =>
        instruction !== undefined || schema !== undefined || c.extract === "page-facts",
      untried:
        "the page's facts (an extract without an instruction) are read by the model-free playwright level, which this page's cascade lacks; say what to read in an instruction"
    }
  }),
  Tool.make("browser.observe", {
    title: "Find page elements",
    annotations: { readOnlyHint: true, openWorldHint: true },
    description:
      "List the elements on the current page that match what you intend, as actions you can pass to browser.act. Use when unsure what to click.",
    args: Schema.Struct({ instruction: text("What to look for: an element or the action you intend.") }),
    result: Schema.Array(Action),
    mask: (now) =>
      now.engines.some((e) => e.capabilities.observe) ? undefined : "no engine available now can list page elements",
    onEngine: { run: (engine, { instruction }) => engine.observe(instruction), serves: (c) => c.observe }
  }),
  Tool.make("browser.snapshot", {
    title: "Page outline",
    annotations: { readOnlyHint: true, openWorldHint: false },
    description:
      'The page as an accessibility outline: every element a person can use with the reference browser.act {ref} and browser.fill_form accept, in every frame and open shadow root, inside its groups, forms, rows, dialogs and landmarks. Kept within maxBytes (collapsed parts say what they hold); since: "last" gives only what changed since your previous snapshot; find gives only the parts that match.',
    args: Schema.Struct({
      maxBytes: Schema.optional(
        Schema.Int.check(Schema.isGreaterThanOrEqualTo(200)).annotate({
          description: `The largest answer in bytes; default ${defaultSnapshotBytes}.`
        })
      ),
      since: Schema.optional(
        Schema.Literal("last").annotate({ description: "Only what changed since your previous snapshot." })
      ),
      find: Schema.optional(
        text('Only the parts that match: a reference ("e40"), a role ("form", "button") or words ("Billing address").')
      )
    }),
    result: Snapshot,
    mask: referencesHere,
    onEngine: {
      run: (engine, { maxBytes, since, find }) =>
        engine.snapshot === undefined
          ? Effect.fail(new Unsupported({ action: "browser.snapshot", message: untriedWithoutReferences }))
          : engine.snapshot({
              maxBytes: maxBytes ?? defaultSnapshotBytes,
              ...(since === undefined ? {} : { since }),
              ...(find === undefined ? {} : { find })
            }),
      serves: (c) => c.references === true,
      tries: (c) => c.references === true,
      untried: untriedWithoutReferences
    },
    produces: (answer) => {
      const { whole, ...result } = answer as typeof answer & { readonly whole?: string }
      return {
        result,
        resources:
          whole === undefined
            ? []
            : [
                {
                  kind: "snapshot",
                  name: "snapshot.txt",
                  mimeType: "text/plain",
                  description: `The whole outline of ${result.url} (${Buffer.byteLength(whole)} bytes)`,
                  text: whole
                }
              ]
      }
    }
  }),
  Tool.make("browser.wait_for", {
    title: "Wait for the page",
    annotations: { readOnlyHint: true, openWorldHint: false },
    description:
      'Wait until text appears on the page (text) or is gone (textGone), until an element a person would name so is there (target, e.g. "Download receipt"), or for a time (timeMs). Every frame and open shadow root is read, every 200 ms.',
    args: Schema.Union([
      Schema.Struct({ text: text("Text to wait for."), timeoutMs: Schema.optional(waitLimit) }),
      Schema.Struct({ textGone: text("Text to wait to disappear."), timeoutMs: Schema.optional(waitLimit) }),
      Schema.Struct({
        target: text('An element to wait for, named as a person reads it: "Continue", "Order confirmed".'),
        timeoutMs: Schema.optional(waitLimit)
      }),
      Schema.Struct({
        timeMs: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 60_000 })).annotate({
          description: "Milliseconds to wait, at most 60000."
        })
      })
    ]),
    result: Schema.Struct({ waitedMs: Schema.Number, description: Schema.String }),
    mask: referencesHere,
    onEngine: {
      run: (engine, args) =>
        engine.waitFor === undefined
          ? Effect.fail(new Unsupported({ action: "browser.wait_for", message: untriedWithoutReferences }))
          : engine.waitFor("timeMs" in args ? args : { ...args, timeoutMs: args.timeoutMs ?? defaultWaitMs }),
      serves: (c) => c.references === true,
      tries: (c) => c.references === true,
      untried: untriedWithoutReferences,
      waits: (args) => ("timeMs" in args ? args.timeMs : (args.timeoutMs ?? defaultWaitMs))
    }
  }),
  Tool.make("browser.evaluate", {
    title: "Run JavaScript in the page",
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    description:
      'Run JavaScript in the page (or in one of its frames) as its own scripts run, and get its value as JSON: an expression ("document.title") or a function ("() => [...document.links].length"); a promise is awaited. The value is redacted like logs. Off unless the service\'s operator turned it on.',
    args: Schema.Struct({
      expression: text("The expression or function to run."),
      frame: Schema.optional(text("A frame to run it in: its iframe's title or name, or part of its URL."))
    }),
    result: Schema.Struct({
      value: Schema.Unknown,
      frame: Schema.optional(Schema.String),
      truncated: Schema.optional(Schema.Struct({ bytes: Schema.Number }))
    }),
    offered: (features) =>
      features.evaluate
        ? undefined
        : "browser.evaluate is off on this service (it runs your JavaScript in the page); the operator turns it on with SWITCHYARD_EVALUATE=on",
    mask: referencesHere,
    onEngine: {
      run: (engine, { expression, frame }) =>
        engine.evaluate === undefined
          ? Effect.fail(new Unsupported({ action: "browser.evaluate", message: untriedWithoutReferences }))
          : engine
              .evaluate(expression, frame)
              .pipe(Effect.map((result) => ({ ...result, value: defaultRedactor.value(result.value) }))),
      isAct: true,
      serves: (c) => c.references === true,
      tries: (c) => c.references === true,
      untried: untriedWithoutReferences
    }
  }),
  Tool.make("browser.screenshot", {
    title: "Screenshot the page",
    annotations: { readOnlyHint: true, openWorldHint: false },
    description: "Take a PNG screenshot of the current page (viewport, or the full page).",
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
        engine
          .screenshot({ fullPage: fullPage ?? false })
          .pipe(Effect.map((png) => ({ mimeType: "image/png" as const, data: Buffer.from(png).toString("base64") })))
    }
  }),
  Tool.make("browser.console", {
    title: "Console messages",
    annotations: { readOnlyHint: true, openWorldHint: false },
    description:
      "The console messages of the session's pages, uncaught errors and the browser's own messages (a failed load), with the script position that wrote each; the newest last. Kept since the browser started (up to 500), redacted like logs.",
    args: Schema.Struct({
      level: Schema.optional(
        Schema.Literals(["debug", "info", "warning", "error"]).annotate({
          description: "The least severe level to include (error: errors only); default everything."
        })
      ),
      since: Schema.optional(
        Schema.Int.annotate({ description: "Only messages after this one: the `last` of an earlier answer." })
      ),
      limit: Schema.optional(
        Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 500 })).annotate({
          description: "At most this many, the newest; default 100."
        })
      )
    }),
    result: Schema.Struct({
      messages: Schema.Array(
        Schema.Struct({
          seq: Schema.Number,
          level: Schema.String,
          kind: Schema.String,
          text: Schema.String,
          source: Schema.optional(Schema.String),
          tab: Schema.optional(Schema.Union([Schema.Number, Schema.String])),
          at: Schema.Number
        })
      ),
      last: Schema.Number.annotate({ description: "Pass as since to get only newer messages next time." }),
      dropped: Schema.optional(Schema.Number)
    }),
    onSession: ({ sandbox }, { level, since, limit }) =>
      sandbox.console({
        limit: limit ?? 100,
        ...(level === undefined ? {} : { level }),
        ...(since === undefined ? {} : { since })
      })
  }),
  Tool.make("browser.network", {
    title: "Network requests",
    annotations: { readOnlyHint: true, openWorldHint: false },
    description:
      "The requests of the session's pages: method, URL, status, type, time and bytes, the newest last (images, fonts, styles and scripts that loaded fine only with all: true). With id, one request's headers and the start of its bodies. Kept since the browser started (up to 500), redacted like logs.",
    args: Schema.Struct({
      filter: Schema.optional(text('Only URLs containing this text, or matching "/regex/".')),
      since: Schema.optional(
        Schema.Int.annotate({ description: "Only requests after this one: the `last` of an earlier answer." })
      ),
      all: Schema.optional(Schema.Boolean.annotate({ description: "Include static resources that loaded fine." })),
      limit: Schema.optional(
        Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 500 })).annotate({
          description: "At most this many, the newest; default 100."
        })
      ),
      id: Schema.optional(
        Schema.Int.annotate({ description: "One request's seq: its headers and bodies (capped, redacted)." })
      )
    }),
    result: Schema.Struct({
      requests: Schema.optional(Schema.Array(Schema.Unknown)),
      last: Schema.optional(Schema.Number),
      dropped: Schema.optional(Schema.Number),
      request: Schema.optional(Schema.Unknown)
    }),
    onSession: ({ sandbox }, { filter, since, all, limit, id }) =>
      id !== undefined
        ? sandbox.request(id).pipe(
            Effect.flatMap((request) =>
              request === undefined
                ? Effect.fail(
                    new InvalidInput({
                      field: "id",
                      message: `no request ${id} is kept (the session keeps its last 500); list them with browser.network`
                    })
                  )
                : Effect.succeed({ request })
            )
          )
        : sandbox.network({
            limit: limit ?? 100,
            ...(filter === undefined ? {} : { filter }),
            ...(since === undefined ? {} : { since }),
            ...(all === undefined ? {} : { all })
          })
  }),
  Tool.make("browser.pdf", {
    title: "Save the page as PDF",
    annotations: { readOnlyHint: true, openWorldHint: false },
    description:
      "The page printed by Chromium as a PDF (print layout, backgrounds on). Over MCP it is a resource of your session (read it with resources/read); elsewhere the answer carries it as base64.",
    args: Schema.Struct({
      landscape: Schema.optional(Schema.Boolean.annotate({ description: "Landscape pages; default portrait." })),
      paper: Schema.optional(Schema.Literals(["letter", "a4"]).annotate({ description: "Paper size; default letter." }))
    }),
    result: Schema.Struct({
      mimeType: Schema.Literal("application/pdf"),
      bytes: Schema.Number,
      pages: Schema.Number,
      data: Schema.optional(text("The PDF, base64 (over MCP: the resource instead).")),
      uri: Schema.optional(text("Over MCP: the resource holding the PDF."))
    }),
    mask: pageBlocked,
    onSession: ({ sandbox }, { landscape, paper }) =>
      sandbox.onPage((page) =>
        Pdf.print(page, {
          ...(landscape === undefined ? {} : { landscape }),
          ...(paper === undefined ? {} : { paper })
        })
      ),
    produces: (pdf) => ({
      result: pdf,
      resources:
        pdf.data === undefined
          ? []
          : [
              {
                kind: "pdf",
                name: "page.pdf",
                mimeType: "application/pdf",
                description: `The page as PDF, ${pdf.pages} pages, ${pdf.bytes} bytes`,
                blob: pdf.data
              }
            ]
    })
  }),
  Tool.make("browser.resize", {
    title: "Resize or emulate a device",
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    description: `Give the page a viewport of width × height CSS pixels, or emulate a device (screen, pixel ratio, touch, user agent): ${Viewport.commonDevices.map((d) => JSON.stringify(d)).join(", ")} or any of Playwright's device names; "desktop" ends the emulation.`,
    args: Schema.Union([
      Schema.Struct({
        width: Schema.Int.check(Schema.isBetween({ minimum: 200, maximum: 4_000 })).annotate({
          description: "Viewport width in CSS pixels."
        }),
        height: Schema.Int.check(Schema.isBetween({ minimum: 200, maximum: 4_000 })).annotate({
          description: "Viewport height in CSS pixels."
        })
      }),
      Schema.Struct({ device: text('A device to emulate ("iPhone 15"), or "desktop" to stop.') })
    ]),
    result: Schema.Struct({
      width: Schema.Number,
      height: Schema.Number,
      deviceScaleFactor: Schema.Number,
      device: Schema.optional(Schema.String),
      mobile: Schema.Boolean,
      touch: Schema.Boolean
    }),
    mask: pageBlocked,
    onSession: ({ sandbox }, args) =>
      sandbox.onPage((page) =>
        "device" in args ? Viewport.emulate(page, args.device) : Viewport.resize(page, args.width, args.height)
      )
  }),
  Tool.make("browser.storage", {
    title: "Save or load a logged-in state",
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    description:
      "Named storage states: save the browser's cookies (HttpOnly ones too) and each open site's localStorage and sessionStorage under a name, load one into this session (it starts logged in), list or delete them. Kept encrypted in the service's store; a session can also start from one (storageState on its first call). Saving and loading need the operator's SWITCHYARD_STORAGE_KEY.",
    args: Schema.Struct({
      action: Schema.Literals(["save", "load", "list", "delete"]),
      name: Schema.optional(text('The state\'s name: "acme-login" (save, load, delete).'))
    }),
    result: Schema.Struct({
      saved: Schema.optional(StateSummary),
      loaded: Schema.optional(
        Schema.Struct({ ...StateSummary.fields, originsFilled: Schema.Number, url: Schema.optional(Schema.String) })
      ),
      states: Schema.optional(Schema.Array(StateSummary)),
      deleted: Schema.optional(Schema.Boolean)
    }),
    mask: (now) => pageBlocked(now),
    onSession: ({ sandbox, storage }, { action, name }) =>
      Effect.gen(function* () {
        if (Option.isNone(storage)) {
          return yield* new Unsupported({ action: "browser.storage", message: "this service keeps no storage states" })
        }
        const states = storage.value
        if (action === "list") return { states: yield* states.list }
        if (name === undefined) {
          return yield* new InvalidInput({ field: "name", message: `${action} needs the state's name` })
        }
        if (action === "delete") return { deleted: yield* states.remove(name) }
        if (action === "save") {
          // Without a key the save is refused before the browser is read.
          const state = states.keyed ? yield* sandbox.onPage(StorageState.capture) : { cookies: [], origins: [] }
          return { saved: yield* states.save(name, state) }
        }
        const { state, summary } = yield* states.load(name)
        const applied = yield* sandbox.onPage((page) => StorageState.apply(page, state))
        return {
          loaded: { ...summary, originsFilled: applied.origins, ...(state.url === undefined ? {} : { url: state.url }) }
        }
      })
  }),
  Tool.make("browser.cookies", {
    title: "Get, set or clear cookies",
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    description:
      "The browser's cookies (HttpOnly ones too): get them (filtered by name or domain), set some ({name, value, url or domain, path?, expires?, httpOnly?, secure?, sameSite?}), or clear them (all, or those matching name or domain).",
    args: Schema.Struct({
      action: Schema.Literals(["get", "set", "clear"]),
      cookies: Schema.optional(Schema.Array(CookieParam)),
      name: Schema.optional(text("Only cookies of this name (get, clear).")),
      domain: Schema.optional(text("Only cookies of this domain or its subdomains (get, clear)."))
    }),
    result: Schema.Struct({
      cookies: Schema.optional(Schema.Array(Schema.Unknown)),
      set: Schema.optional(Schema.Number),
      cleared: Schema.optional(Schema.Number)
    }),
    mask: pageBlocked,
    onSession: ({ sandbox }, { action, cookies, name, domain }) =>
      sandbox.onPage((page) =>
        Effect.gen(function* () {
          const matches = (c: { readonly name: string; readonly domain: string }) =>
            (name === undefined || c.name === name) &&
            (domain === undefined || c.domain.replace(/^\./, "").endsWith(domain.replace(/^\./, "")))
          if (action === "set") {
            if (cookies === undefined || cookies.length === 0) {
              return yield* new InvalidInput({ field: "cookies", message: "set needs the cookies to set" })
            }
            const unplaced = cookies.find((c) => c.url === undefined && c.domain === undefined)
            if (unplaced !== undefined) {
              return yield* new InvalidInput({
                field: "cookies",
                message: `the cookie ${JSON.stringify(unplaced.name)} needs a url or a domain`
              })
            }
            yield* StorageState.setCookies(page, cookies)
            return { set: cookies.length }
          }
          const all = (yield* StorageState.cookies(page)).filter(matches)
          if (action === "get") return { cookies: all }
          if (name === undefined && domain === undefined) {
            yield* StorageState.clearCookies(page)
          } else {
            yield* StorageState.setCookies(
              page,
              all.map((c) => ({ ...c, value: "", session: false, expires: 1 }))
            )
          }
          return { cleared: all.length }
        })
      )
  }),
  Tool.make("browser.status", {
    title: "Session status",
    annotations: { readOnlyHint: true, openWorldHint: false },
    description: "Show the session: browser, engine in use, page, and which tools work right now.",
    args: Empty,
    result: Status,
    onSession: ({ sandbox }) => sandbox.status
  }),
  Tool.make("browser.tabs", {
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
    title: "Close the browser",
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    description: "Close the session's browser. The next browser call starts a fresh one.",
    args: Empty,
    result: Closed,
    onSession: ({ sandbox }) => sandbox.close.pipe(Effect.as({ status: "ok" as const }))
  }),
  Tool.make("browser.handoff", {
    title: "Hand over to a person",
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    description:
      "Ask a person to take over the browser (CAPTCHA, login, a judgement call). Returns where they can see it. Automation waits until browser.resume.",
    args: Schema.Struct({ reason: text("Why a person is needed (CAPTCHA, login, a decision).") }),
    result: Schema.Struct({ url: Schema.String, since: Schema.String, reason: Schema.String, next: Schema.String }),
    mask: (now) => (personHere(now) ? undefined : noPerson),
    onSession: ({ handoff }, { reason }) => handoff.handoff(reason)
  }),
  Tool.make("browser.resume", {
    title: "Resume automation",
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    description: "The person is done: hand the browser back to automation after browser.handoff.",
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
