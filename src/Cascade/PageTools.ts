/**
 * The tools that read or work the page beside acting on it, declared as every tool is (Tool.ts): the outline, waits and
 * the agent's scripts on the engine that hands out references; console, network, PDF, viewport, storage states and
 * cookies on the session's page without an engine. Tools.ts lists them among the others. (Long: each record carries its
 * own Schemas and the text an LLM reads.)
 */
import { Effect, Option, Schema } from "effect"
import { Unsupported } from "../Errors/Engine.ts"
import { InvalidInput } from "../Errors/Page.ts"
import { defaultRedactor } from "../Logging/Redact.ts"
import * as Pdf from "../Sandbox/Pdf.ts"
import * as StorageState from "../Sandbox/StorageState.ts"
import * as Viewport from "../Sandbox/Viewport.ts"
import * as Tool from "./Tool.ts"

const text = (description: string) => Schema.String.annotate({ description })

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

/** On the engine that hands out references: the outline, waits, the agent's scripts. */
export const reading = [
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
  })
] as const

/** On the session's page without an engine: what it logged and fetched, its PDF, its viewport, states and cookies. */
export const onPage = [
  Tool.make("browser.console", {
    needsStorageState: false,
    title: "Console messages",
    annotations: { readOnlyHint: true, openWorldHint: false },
    description:
      "The console messages, uncaught errors and the browser's own messages (a failed load) of the page in the active tab since it loaded, with the script position that wrote each; the newest last; redacted like logs. since: the `last` of an earlier answer gives what came after it, on every tab (0: all the session keeps, up to 500).",
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
    needsStorageState: false,
    title: "Network requests",
    annotations: { readOnlyHint: true, openWorldHint: false },
    description:
      "The requests of the page in the active tab since it started loading: method, URL, status, type, time and bytes, the newest last (images, fonts, styles and scripts that loaded fine only with all: true); redacted like logs. since: the `last` of an earlier answer gives what came after it, on every tab (0: all the session keeps, up to 500). With id, one request's headers and the start of its bodies.",
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
    needsStorageState: false,
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
  })
] as const
