/**
 * How a redacted value is written: the `[redacted:kind]` marker, recognising a marker already there (so redaction is
 * idempotent), and the replacers that put a marker where a value was while keeping its label and quotes.
 */

/** A `String.replace` callback: the match, then the regex's groups. */
export type Replacer = (match: string, ...groups: Array<string>) => string

export interface Marking {
  /** The marker for a kind of secret. */
  readonly mark: (kind: string) => string
  /** Whether a value is already one of the markers. */
  readonly isMarker: (s: string) => boolean
}

const closingQuote: Record<string, string> = { '"': '"', "'": "'", "“": "”", "‘": "’" }
const isQuoted = (raw: string) => raw.length >= 2 && closingQuote[raw[0]!] === raw[raw.length - 1]
const escapedQuotes = (raw: string) => raw.length >= 4 && raw.startsWith('\\"') && raw.endsWith('\\"')

const unquote = (raw: string) => (escapedQuotes(raw) ? raw.slice(2, -2) : isQuoted(raw) ? raw.slice(1, -1) : raw)
const requote = (raw: string, marker: string) =>
  escapedQuotes(raw) ? `\\"${marker}\\"` : isQuoted(raw) ? raw[0] + marker + raw[raw.length - 1] : marker

export const replacers = ({ mark, isMarker }: Marking) => ({
  /** Replaces a captured value (quotes kept); empty values and values already redacted stay as they are. */
  captured:
    (kind: string): Replacer =>
    (match, label, value) => {
      const inner = unquote(value!)
      return inner === "" || isMarker(inner) ? match : label! + requote(value!, mark(kind))
    },
  /** `label sep value`: the value is replaced, label and separator kept. */
  labelled:
    (kind: string): Replacer =>
    (match, label, sep, value) => {
      const inner = unquote(value!)
      return inner === "" || isMarker(inner) ? match : label! + sep! + requote(value!, mark(kind))
    },
  /** The whole match is replaced. */
  whole:
    (kind: string): Replacer =>
    (match) =>
      match === "" || isMarker(match) ? match : mark(kind)
})
