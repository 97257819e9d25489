/**
 * What a tool is: one record with its name, the text an LLM reads, the Schemas of its arguments and result, and its
 * handler (work on an engine through the cascade, or on the session itself). Surfaces and the Router derive from it.
 *
 * Why not Effect's `ai/Tool` + `Toolkit` (the model for this shape): a toolkit's handlers are a layer of services, and
 * `handle` streams results encoded through the success Schema and fails with `AiError`; ours run in one session's
 * Router on the engine the cascade leases per attempt (or on the session), and answers carry the state block and the
 * result exactly as the engine returned it.
 */
import { Effect, type Option, Schema } from "effect"
import type { JsonSchema } from "effect/JsonSchema"
import type { Capabilities, Engine } from "../Engine/Engine.ts"
import type { EngineSpec } from "../Engine/EngineSpec.ts"
import type { SwitchyardError } from "../Errors.ts"
import type { OpenDialog, Sandbox } from "../Sandbox/Sandbox.ts"
import type { StorageStates } from "../Store/StorageStates.ts"
import type { Takeover } from "../Takeover/Handoff.ts"
import type { HandoffTools } from "./HandoffTools.ts"

/** What a session tool works on: the session's Sandbox, its person's takeover and the named storage states. */
export interface Session {
  readonly sandbox: Sandbox["Service"]
  readonly handoff: HandoffTools
  /** Where named storage states are kept, when the service has a store for them. */
  readonly storage: Option.Option<StorageStates["Service"]>
}

/** Tools the service's operator turns on or off (a setting, not the page): off, a tool is masked and refused. */
export interface Features {
  /** `browser.evaluate`: the agent's JavaScript in the page (`SWITCHYARD_EVALUATE=on`). */
  readonly evaluate: boolean
}

export const defaultFeatures: Features = { evaluate: false }

/** What the session can do right now: what a tool's mask reads. */
export interface Availability {
  /** Engines the cascade could use now (configured, not disabled for this request or step). */
  readonly engines: ReadonlyArray<EngineSpec>
  /** The person's takeover in progress, if any. */
  readonly takeover: Option.Option<Takeover>
  /** The dialog open on the active tab, if any. */
  readonly dialog: Option.Option<OpenDialog>
  /** What the operator turned on. */
  readonly features: Features
}

/** Work on an engine, run through the Stagehand policy and the cascade. */
export interface OnEngine<A, R> {
  readonly run: (engine: Engine["Service"], args: A) => Effect.Effect<R, SwitchyardError>
  /** The call may change the page (an act): the cascade does not repeat it blindly after a failure. */
  readonly isAct?: boolean
  /** The URL the call opens: checked against the URL policy, and it picks the cascade for that page. */
  readonly opens?: (args: A) => string
  /** Whether an engine with these capabilities can serve the call; by default any engine can. */
  readonly serves?: (capabilities: Capabilities, args: A) => boolean
  /** Whether the call means anything to an engine with these capabilities; levels whose engine it does not are not
   * tried (an element reference to an engine that never handed it out). By default every engine is tried. */
  readonly tries?: (capabilities: Capabilities, args: A) => boolean
  /** Why no level ran the call when `tries` ruled every level of the page's cascade out: which engines it needs. */
  readonly untried?: string
  /**
   * Local files the call puts into the page (an upload): checked against the upload roots, and any file chooser the
   * page opens during the call is answered with them.
   */
  readonly files?: (args: A) => ReadonlyArray<string>
  /** The call waits this long by design (`wait_for`): its attempt limit is raised to fit, and it is not repeated. */
  readonly waits?: (args: A) => number
}

/**
 * Something a call made that a client may fetch apart from the answer (a screenshot, a PDF, a whole snapshot the
 * budget cut, a download): MCP offers it as a resource of the client's session; JSON-RPC leaves it out.
 */
export interface Resource {
  /** What it is: `screenshot`, `pdf`, `snapshot`, `download`. */
  readonly kind: string
  /** A file name for it: `page.pdf`. */
  readonly name: string
  readonly mimeType: string
  readonly description?: string
  /** The content as text, or as base64 (`blob`), or a file on the service's machine (`path`). */
  readonly text?: string
  readonly blob?: string
  readonly path?: string
}

/** A successful call's result as the answer carries it, and what it made besides. */
export interface Produced {
  readonly result: unknown
  readonly resources: ReadonlyArray<Resource>
}

/** Work on the session itself, without an engine. */
export type OnSession<A, R> = (session: Session, args: A) => Effect.Effect<R, SwitchyardError>

/** A call with its arguments decoded: the handler bound to them, ready for the Router to dispatch. */
export type Bound =
  | {
      readonly _tag: "engine"
      readonly args: unknown
      readonly isAct: boolean
      readonly opens: string | undefined
      readonly run: (engine: Engine["Service"]) => Effect.Effect<unknown, SwitchyardError>
      readonly serves: (capabilities: Capabilities) => boolean
      readonly tries: (capabilities: Capabilities) => boolean
      readonly untried: string
      readonly files: ReadonlyArray<string>
      readonly waitsMs: number | undefined
    }
  | {
      readonly _tag: "session"
      readonly args: unknown
      readonly run: (session: Session) => Effect.Effect<unknown, SwitchyardError>
    }

/** Hints for clients (MCP tool annotations): what a call may do to the page and the world. */
export interface Annotations {
  /** The call only reads: it does not change the page. */
  readonly readOnlyHint?: boolean
  /** The call may do something that cannot be undone (submit a form, close the browser). */
  readonly destructiveHint?: boolean
  /** Repeating the call with the same arguments has no further effect. */
  readonly idempotentHint?: boolean
  /** The call reaches the open web (pages beyond the service). */
  readonly openWorldHint?: boolean
}

/** A tool as surfaces and the Router see it, whatever its argument and result types. */
export interface Any {
  /** The name, dotted (`browser.navigate`): seed 002's spelling, kept on JSON-RPC. */
  readonly name: string
  /** The same name with `_` for `.` (`browser_navigate`): what model APIs limited to `[a-zA-Z0-9_-]` accept. */
  readonly underscoreName: string
  /** A short human-readable name for the tool. */
  readonly title: string
  readonly annotations: Annotations
  /** What the tool is for and when to use it: the text an LLM reads. */
  readonly description: string
  readonly args: Schema.Constraint
  /** What a successful call returns; answers carry the handler's value as it is. */
  readonly result: Schema.Constraint
  /** Engine tools run on an engine (refused while a person has the browser); session tools on the session. */
  readonly kind: "engine" | "session"
  /** Why the tool cannot serve now (mask, don't remove), or undefined when it can. */
  readonly mask: (now: Availability) => string | undefined
  /** The answer's result and the resources a successful call made (by default the result as is, and none). */
  readonly produces: (result: unknown) => Produced
  /** Why the service does not offer the tool (a setting turned it off): every call is refused with it; undefined when
   * it does. */
  readonly offered: (features: Features) => string | undefined
  /** Answered at once while a long call holds the session, not queued behind it (a status read, a close that stops
   * that call, a person's takeover and hand-back, which the long call may be waiting for). */
  readonly outsideLane: boolean
  /** What the tool answers on a session that is not open, without opening one; undefined: the call opens it. */
  readonly whenNotOpen: unknown
  /** A successful call ends the session: its browser is closed and its slot is free. */
  readonly closesSession: boolean
  /** A successful call may leave the session on another page: the fleet saves the page after it. */
  readonly changesPage: boolean
  /** The call works on a logged-in page: the session's saved storage state is put into the browser before it. */
  readonly needsStorageState: boolean
  /** The answer carries the whole state block, not only what changed since the previous answer. */
  readonly fullState: boolean
  /** The MCP `inputSchema`: one object, the tool's arguments plus the common ones. */
  readonly inputSchema: JsonSchema
  /** The MCP `outputSchema`: the answer as structured content, `{result, traceId, attemptId, stepId?, state}`. */
  readonly outputSchema: JsonSchema
  readonly decode: (raw: unknown) => Effect.Effect<Bound, Schema.SchemaError>
}

export interface Tool<Name extends string, Args extends Schema.Constraint, Result extends Schema.Constraint>
  extends Any {
  readonly name: Name
  readonly args: Args
  readonly result: Result
}

/** Arguments every tool takes besides its own: which browser session, and the caller's request and step. */
export const Common = Schema.Struct({
  session: Schema.optionalKey(
    Schema.String.annotate({
      description: "Browser session to use; omit for the default one. Workers use one name each."
    })
  ),
  traceId: Schema.optionalKey(
    Schema.String.annotate({
      description: "Your request's id: Stagehand's retry and fallback state is kept per request."
    })
  ),
  stepId: Schema.optionalKey(
    Schema.String.annotate({ description: "The step of a multi-step flow, when state should be kept per step." })
  ),
  storageState: Schema.optionalKey(
    Schema.String.annotate({
      description:
        "On a session's first call: the saved storage state (browser.storage) it starts from, logged in as when it was saved."
    })
  )
})

export interface CallMeta {
  /** The agent's request; one is made up when absent (a one-shot call). */
  readonly traceId?: string
  /** A step of a multi-step flow: Stagehand's retry and disable state is kept per (traceId, stepId). */
  readonly stepId?: string
  /** The saved storage state the session's browser starts from (applied before its first call). */
  readonly storageState?: string
  /** The site's platform as the caller knows it (a job application's steps do); else it is read from the URL. */
  readonly platform?: string
}

/** Splits a surface's parameters into the session, the call's trace and step, and the tool's own arguments. */
export const splitCommon = (params: unknown) => {
  const { session, traceId, stepId, storageState, ...args }: Record<string, unknown> =
    typeof params === "object" && params !== null && !Array.isArray(params) ? { ...params } : {}
  const meta: CallMeta = {
    ...(typeof traceId === "string" ? { traceId } : {}),
    ...(typeof stepId === "string" ? { stepId } : {}),
    ...(typeof storageState === "string" ? { storageState } : {})
  }
  // The session name as given (null: absent): the Sessions refuse one that is not a string rather than coerce it.
  return { session: session === null ? undefined : session, meta, args }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
const propertiesOf = (schema: Record<string, unknown>) => (isRecord(schema.properties) ? schema.properties : {})
const jsonOf = (schema: Schema.Constraint) => Schema.toJsonSchemaDocument(schema).schema
const commonProperties = propertiesOf(jsonOf(Common))

/**
 * Arguments as an MCP `inputSchema`: always one object at the top (a union's alternatives merged, the choice
 * explained in the description), plus the common arguments.
 */
const inputSchemaOf = (args: Schema.Constraint): JsonSchema => {
  const doc = jsonOf(args)
  const alternatives = Array.isArray(doc.anyOf) ? doc.anyOf.filter(isRecord) : []
  const required = Array.isArray(doc.required) ? doc.required : []
  return {
    type: "object",
    properties: { ...propertiesOf(doc), ...Object.assign({}, ...alternatives.map(propertiesOf)), ...commonProperties },
    ...(required.length > 0 ? { required } : {}),
    ...(alternatives.length > 0
      ? {
          description: `Give exactly one of: ${alternatives.map((a) => Object.keys(propertiesOf(a)).join(" + ")).join(" or ")}`
        }
      : {})
  }
}

/** An answer as structured content: the result as its Schema says, with the call's ids and the state block. */
const outputSchemaOf = (result: Schema.Constraint): JsonSchema => ({
  type: "object",
  properties: {
    result: jsonOf(result),
    traceId: { type: "string" },
    stepId: { type: "string" },
    attemptId: { type: "string" },
    state: {
      type: "object",
      description:
        "The engine and level in use and the page (url, title); an open dialog (`dialog`, only while one is open); engines disabled for this request (`disabled`, only when some are); the tabs (`tabs`), the downloads (`downloads`) and which tools work now (`tools`) in the first answer and whenever they change. browser.status always has it all."
    },
    pageEvents: {
      type: "array",
      description:
        "What happened on the pages besides the call: a tab opened or closed, a dialog, files chosen, a download, the page restored (after a crash or hibernation)."
    }
  },
  required: ["result", "traceId", "attemptId", "state"]
})

/** Optional arguments are advertised nullable: a `null` one is taken as absent. */
const dropNulls = (raw: unknown) =>
  isRecord(raw) ? Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== null)) : raw

interface Declaration<Args extends Schema.ConstraintDecoder<unknown>, Result extends Schema.Constraint> {
  /** A short human-readable name. */
  readonly title: string
  readonly description: string
  readonly annotations: Annotations
  readonly args: Args
  readonly result: Result
  /** Why the tool cannot serve now, given what the session can do; default: it always can. */
  readonly mask?: (now: Availability) => string | undefined
  /** What a successful call made that clients fetch apart from the answer, and the result without it. */
  readonly produces?: (result: Result["Type"]) => Produced
  /** Why the service does not offer the tool with these settings; default: it always does. */
  readonly offered?: (features: Features) => string | undefined
  /** See `Any`; each defaults to false (`needsStorageState` to true, `whenNotOpen` to opening the session). */
  readonly outsideLane?: boolean
  readonly whenNotOpen?: Result["Type"]
  readonly closesSession?: boolean
  readonly changesPage?: boolean
  readonly needsStorageState?: boolean
  readonly fullState?: boolean
}

/** Declares a tool; exactly one of `onEngine` and `onSession` says what it does. */
export const make = <
  const Name extends string,
  Args extends Schema.ConstraintDecoder<unknown>,
  Result extends Schema.Constraint
>(
  name: Name,
  declaration: Declaration<Args, Result> &
    (
      | { readonly onEngine: OnEngine<Args["Type"], Result["Type"]> }
      | { readonly onSession: OnSession<Args["Type"], Result["Type"]> }
    )
): Tool<Name, Args, Result> => {
  const decodeArgs = Schema.decodeUnknownEffect(declaration.args)
  const bind = (args: Args["Type"]): Bound => {
    if ("onSession" in declaration) {
      const run = declaration.onSession
      return { _tag: "session", args, run: (session) => run(session, args) }
    }
    const work = declaration.onEngine
    return {
      _tag: "engine",
      args,
      isAct: work.isAct ?? false,
      opens: work.opens?.(args),
      run: (engine) => work.run(engine, args),
      serves: (capabilities) => work.serves?.(capabilities, args) ?? true,
      tries: (capabilities) => work.tries?.(capabilities, args) ?? true,
      untried: work.untried ?? "no level of this page's cascade can run it",
      files: work.files?.(args) ?? [],
      waitsMs: work.waits?.(args)
    }
  }
  return {
    name,
    underscoreName: name.replaceAll(".", "_"),
    title: declaration.title,
    annotations: declaration.annotations,
    description: declaration.description,
    args: declaration.args,
    result: declaration.result,
    kind: "onSession" in declaration ? "session" : "engine",
    mask: (now) => declaration.offered?.(now.features) ?? declaration.mask?.(now),
    offered: declaration.offered ?? (() => undefined),
    produces: (result) =>
      declaration.produces === undefined ? { result, resources: [] } : declaration.produces(result as Result["Type"]),
    outsideLane: declaration.outsideLane ?? false,
    whenNotOpen: declaration.whenNotOpen,
    closesSession: declaration.closesSession ?? false,
    changesPage: declaration.changesPage ?? false,
    needsStorageState: declaration.needsStorageState ?? true,
    fullState: declaration.fullState ?? false,
    inputSchema: inputSchemaOf(declaration.args),
    outputSchema: outputSchemaOf(declaration.result),
    decode: (raw) => decodeArgs(dropNulls(raw)).pipe(Effect.map(bind))
  }
}
