/**
 * What the libraries inside the service print with `console.*` reaches stderr only redacted (stdout carries the
 * protocol). Stagehand prints its own log lines there whenever a call outlives the instance that ran it, with a fill's
 * typed value (`args:`) and the page's URL in their fields: a line of that shape is read back into its fields and
 * redacted as a value, so the key rules apply (a typing method's arguments, URLs, cookies).
 */
import { formatWithOptions } from "node:util"
import * as Redact from "./Redact.ts"

/** Stagehand's console fallback: `[ISO time] LEVEL: message`, then `    key: value` fields (JSON may span lines). */
const stagehandHeader = /^(\[\d{4}-\d{2}-\d{2}T[\d:.]+Z\] (?:ERROR|INFO|DEBUG): )(.*)$/
const stagehandField = /^ {4}([A-Za-z_][\w-]*): ?(.*)$/

const parsed = (text: string): unknown => {
  const trimmed = text.trim()
  if (!/^[[{]/.test(trimmed)) return text
  try {
    return JSON.parse(trimmed)
  } catch {
    return text
  }
}

/** A Stagehand log line redacted field by field; undefined when `text` is not one. */
const stagehandLine = (text: string, redactor: Redact.Redactor): string | undefined => {
  const [first = "", ...rest] = text.split("\n")
  const header = stagehandHeader.exec(first)
  if (header === null) return undefined
  const fields: Array<[string, string]> = []
  for (const line of rest) {
    const field = stagehandField.exec(line)
    const last = fields.at(-1)
    if (field !== null) fields.push([field[1]!, field[2]!])
    else if (last !== undefined) last[1] += `\n${line}`
    else fields.push(["", line])
  }
  const record: Record<string, unknown> = { message: header[2] }
  for (const [key, value] of fields) record[key] = parsed(value)
  const redacted = redactor.value(record) as Record<string, unknown>
  const show = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v))
  return [
    `${header[1]}${show(redacted.message)}`,
    ...Object.entries(redacted)
      .filter(([key]) => key !== "message")
      .map(([key, value]) => `    ${key}: ${show(value)}`)
  ].join("\n")
}

/** What a library printed, as it may reach stderr. */
export const redactPrinted = (text: string, redactor: Redact.Redactor = Redact.defaultRedactor): string =>
  stagehandLine(text, redactor) ?? redactor.text(text)

/** Marks a thread's console as installed (a symbol shared by every copy of this module in the thread). */
const installed: unique symbol = Symbol.for("switchyard/LibraryOutput.installed") as never

const methods = ["log", "info", "debug", "warn", "error", "trace"] as const

/**
 * Sends every `console` method of this thread to the current `console.error` (stderr), redacted. Installed once per
 * thread: by the service's commands on the main thread and by each engine worker.
 */
export const install = (redactor: Redact.Redactor = Redact.defaultRedactor) => {
  const target = console as unknown as Record<string, unknown> & { [installed]?: true }
  if (target[installed]) return
  const print = console.error.bind(console)
  const write = (...args: Array<unknown>) =>
    print(redactPrinted(formatWithOptions({ colors: false }, ...args), redactor))
  for (const method of methods) target[method] = write
  target[installed] = true
}
