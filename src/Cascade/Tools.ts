/**
 * The agent-facing tools: stable names, what each is for (the text an LLM reads), and the Schema of its arguments.
 * The list never changes at runtime (mask, don't remove); which engine can serve a call is decided per call.
 */
import { Schema } from "effect"
import { Action } from "../Engine/Engine.ts"

const text = (description: string) => Schema.String.annotate({ description })

export const Navigate = Schema.Struct({ url: text("Absolute URL to open, including the scheme (https://…).") })
export const Act = Schema.Union([
  Schema.Struct({
    instruction: text('One action in plain words: click "Submit", fill "Email" with "a@b.c", press Enter, scroll down.')
  }),
  Schema.Struct({
    action: Action.annotate({ description: "An action returned by browser.observe, replayed exactly." })
  })
])
export const Extract = Schema.Struct({
  instruction: text("What to read from the page."),
  schema: Schema.optional(Schema.Unknown.annotate({ description: "JSON schema the result must match." }))
})
export const Observe = Schema.Struct({ instruction: text("What to look for: an element or the action you intend.") })
export const Screenshot = Schema.Struct({
  fullPage: Schema.optional(Schema.Boolean.annotate({ description: "Capture the whole page, not just the viewport." }))
})
export const Handoff = Schema.Struct({ reason: text("Why a person is needed (CAPTCHA, login, a decision).") })
export const Empty = Schema.Struct({})

export const tools = {
  "browser.navigate": Navigate,
  "browser.act": Act,
  "browser.extract": Extract,
  "browser.observe": Observe,
  "browser.screenshot": Screenshot,
  "browser.status": Empty,
  "browser.close": Empty,
  "browser.handoff": Handoff,
  "browser.resume": Empty
} as const

export type ToolName = keyof typeof tools
export const toolNames = Object.keys(tools) as ReadonlyArray<ToolName>
export const isToolName = (name: string): name is ToolName => Object.hasOwn(tools, name)

export const descriptions: Record<ToolName, string> = {
  "browser.navigate": "Open a URL in the session's browser. Use first, or to go to a known address.",
  "browser.act":
    "Do one thing on the current page: click, type, select, check, press a key, scroll. Give one action per call, or replay an action from browser.observe.",
  "browser.extract":
    "Read data from the current page. Without a schema you get the page's text, headings, links and form fields; with a JSON schema you get an object of that shape.",
  "browser.observe":
    "List the elements on the current page that match what you intend, as actions you can pass to browser.act. Use when unsure what to click.",
  "browser.screenshot": "Take a PNG screenshot of the current page (viewport, or the full page).",
  "browser.status": "Show the session: browser, engine in use, page, and which tools work right now.",
  "browser.close": "Close the session's browser. The next browser call starts a fresh one.",
  "browser.handoff":
    "Ask a person to take over the browser (CAPTCHA, login, a judgement call). Returns where they can see it. Automation waits until browser.resume.",
  "browser.resume": "The person is done: hand the browser back to automation after browser.handoff."
}

/** Tools that run on an engine through the cascade; the others are answered by the session itself. */
export const engineTools: ReadonlyArray<ToolName> = [
  "browser.navigate",
  "browser.act",
  "browser.extract",
  "browser.observe",
  "browser.screenshot"
]

/** Arguments every tool takes besides its own: which browser session, and the caller's request and step. */
const common = {
  session: {
    type: "string",
    description: "Browser session to use; omit for the default one. Workers use one name each."
  },
  traceId: {
    type: "string",
    description: "Your request's id: Stagehand's retry and fallback state is kept per request."
  },
  stepId: { type: "string", description: "The step of a multi-step flow, when state should be kept per step." }
} as const

/**
 * The JSON schema of each tool's arguments as an MCP `inputSchema`: always one object at the top (a union's
 * alternatives merged, the choice explained in the description), plus the common arguments.
 */
export const inputSchemas: Record<ToolName, Record<string, unknown>> = Object.fromEntries(
  toolNames.map((name) => {
    const doc = Schema.toJsonSchemaDocument(tools[name] as Schema.Top).schema as {
      type?: string
      properties?: Record<string, unknown>
      required?: ReadonlyArray<string>
      anyOf?: ReadonlyArray<{ properties?: Record<string, unknown> }>
    }
    const alternatives = doc.anyOf ?? []
    const properties = {
      ...(doc.properties ?? {}),
      ...Object.assign({}, ...alternatives.map((a) => a.properties ?? {})),
      ...common
    }
    return [
      name,
      {
        type: "object",
        properties,
        ...(doc.required && doc.required.length > 0 ? { required: doc.required } : {}),
        ...(alternatives.length > 0
          ? {
              description:
                "Give exactly one of: " +
                alternatives.map((a) => Object.keys(a.properties ?? {}).join(" + ")).join(" or ")
            }
          : {})
      }
    ]
  })
) as unknown as Record<ToolName, Record<string, unknown>>
