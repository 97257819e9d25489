/**
 * Values as people write them, converted to the format a date, time, month, week, date-time, number or range input
 * takes (`07/04/1990` → `1990-07-04`, `2:30 PM` → `14:30`, `−1` → `-1`). What cannot be read unambiguously is refused
 * with the format expected, so a field is never set to something else, or to nothing, while the answer says success.
 *
 * Day and month order: a date whose first two numbers are both 12 or less (`07/04/1990`) is read in the order of the
 * page's language (`lang` of the input or the document): month first for US English and pages that name no language,
 * day first for every other language (`en-GB`, `de`, `fr`…). Dots (`15.03.2026`) always mean day first. The answer
 * says which order was used whenever it mattered.
 */
import { Result } from "effect"

export type Kind = "date" | "time" | "month" | "week" | "datetime-local" | "number" | "range"

export const kinds: ReadonlyArray<string> = ["date", "time", "month", "week", "datetime-local", "number", "range"]

/** The input a value is for: its kind and what the page says about it (empty strings when it says nothing). */
export interface Field {
  readonly kind: Kind
  /** The language of the input or the page (`en-US`, `de`), which decides day/month order and decimal commas. */
  readonly lang?: string
  readonly min?: string
  readonly max?: string
  readonly step?: string
}

export interface Converted {
  /** The value in the input's own format. */
  readonly value: string
  /** How an ambiguous spelling was read, for the answer: `month first: the page names no language`. */
  readonly note?: string
}

/** The formats each kind accepts, named in `invalid_input`. */
export const expected: Record<Kind, string> = {
  date: "a date such as YYYY-MM-DD, MM/DD/YYYY, DD.MM.YYYY or 'March 15, 2026'",
  time: "a time such as 14:30, 2:30 PM or 9 am",
  month: "a month such as YYYY-MM, 03/2026 or 'March 2026'",
  week: "a week such as 2026-W11, 'week 11 2026' or a date in that week",
  "datetime-local": "a date and time such as 2026-03-15T14:30, '03/15/2026 2:30 PM' or 'March 15, 2026 at 9 am'",
  number: "a number such as 42, -1, 1,234.5 or 3.75",
  range: "a number such as 42 or -1"
}

// Month names of the languages job and SaaS forms are most often written in, accents stripped.
const monthNames: ReadonlyArray<ReadonlyArray<string>> = [
  ["january", "januar", "janner", "janvier", "enero", "gennaio"],
  ["february", "februar", "fevrier", "febrero", "febbraio"],
  ["march", "marz", "maerz", "mars", "marzo"],
  ["april", "avril", "abril", "aprile"],
  ["may", "mai", "mayo", "maggio"],
  ["june", "juni", "juin", "junio", "giugno"],
  ["july", "juli", "juillet", "julio", "luglio"],
  ["august", "aout", "agosto"],
  ["september", "sept", "septembre", "septiembre", "setiembre", "settembre"],
  ["october", "oktober", "octobre", "octubre", "ottobre"],
  ["november", "novembre", "noviembre"],
  ["december", "dezember", "decembre", "diciembre", "dicembre"]
]
const weekdays =
  /^(mon|monday|tue|tues|tuesday|wed|wednesday|thu|thur|thurs|thursday|fri|friday|sat|saturday|sun|sunday)$/

const plain = (s: string) =>
  s
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()

/** The month (1–12) a word names: a whole name, or a start of at least three letters that names one month only. */
export const monthOf = (word: string): number | undefined => {
  const w = plain(word).replace(/\.$/, "")
  if (w.length < 3 || !/^[a-z]+$/.test(w)) return undefined
  const found = new Set<number>()
  monthNames.forEach((names, i) => {
    if (names.some((n) => n === w || n.startsWith(w))) found.add(i + 1)
  })
  return found.size === 1 ? [...found][0] : undefined
}

/** Month first for US English and pages that name no language; day first elsewhere. */
export const monthFirst = (lang: string | undefined) => {
  const tag = (lang ?? "").trim().toLowerCase()
  if (tag === "" || tag === "en") return true
  const [language, region] = tag.split(/[-_]/)
  return language === "en" && ["us", "ph", "ca", "pr", "gu", "as", "vi", "um", "fm", "mh", "pw"].includes(region ?? "")
}

const decimalComma = (lang: string | undefined) => {
  const language = (lang ?? "").trim().toLowerCase().split(/[-_]/)[0] ?? ""
  return language !== "" && !["en", "ja", "zh", "ko", "he", "th", "hi", "ms"].includes(language)
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0")
const leap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0
const daysIn = (y: number, m: number) => [31, leap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]!

interface Ymd {
  readonly y: number
  readonly m: number
  readonly d: number
  readonly note?: string
}

/** A two-digit year: within ten years ahead of `thisYear` in this century, else the last one. */
const fullYear = (text: string, thisYear: number) => {
  if (text.length === 4) return Number(text)
  const yy = Number(text)
  const century = Math.floor(thisYear / 100) * 100
  return yy <= (thisYear % 100) + 10 ? century + yy : century - 100 + yy
}

const valid = (y: number, m: number, d: number) =>
  y >= 1 && y <= 9999 && m >= 1 && m <= 12 && d >= 1 && d <= daysIn(y, m)

const readDate = (text: string, lang: string | undefined, thisYear: number): Ymd | undefined => {
  const t = plain(text.trim())
    .replace(/(\d)(st|nd|rd|th)\b/g, "$1")
    .replace(/\b(the|of|de|le)\b/g, " ")
  let match = /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$/.exec(t) ?? /^(\d{4})(\d{2})(\d{2})$/.exec(t)
  if (match !== null) return { y: Number(match[1]), m: Number(match[2]), d: Number(match[3]) }
  match = /^(\d{1,2})([-/.])(\d{1,2})\2(\d{4}|\d{2})$/.exec(t)
  if (match !== null) {
    const [a, b] = [Number(match[1]), Number(match[3])]
    const y = fullYear(match[4]!, thisYear)
    const yearNote = match[4]!.length === 2 ? `${match[4]} read as ${y}` : undefined
    if (match[2] === ".") return { y, m: b, d: a, ...(yearNote === undefined ? {} : { note: yearNote }) }
    const first = monthFirst(lang)
    const ambiguous = a <= 12 && b <= 12 && a !== b
    const [m, d] = a > 12 ? [b, a] : b > 12 ? [a, b] : first ? [a, b] : [b, a]
    const why =
      lang === undefined || lang.trim() === "" ? "the page names no language" : `the page's language is ${lang}`
    const orderNote = ambiguous ? `${first ? "month" : "day"} first: ${why}` : undefined
    const note = [orderNote, yearNote].filter((n) => n !== undefined).join("; ")
    return { y, m, d, ...(note === "" ? {} : { note }) }
  }
  // Month names: "March 15, 2026", "15 March 2026", "15-Mar-2026", "2026 March 15", "Sunday, March 15th 2026".
  const words = t.split(/[\s,/.-]+/).filter((w) => w !== "" && !weekdays.test(w))
  const named = words.map(monthOf)
  const at = named.findIndex((m) => m !== undefined)
  if (at < 0 || named.filter((m) => m !== undefined).length !== 1 || words.length !== 3) return undefined
  const numbers = words.filter((_, i) => i !== at)
  if (!numbers.every((n) => /^\d{1,4}$/.test(n))) return undefined
  const m = named[at]!
  const yearAt = numbers.findIndex((n) => n.length === 4)
  if (yearAt >= 0) {
    const d = numbers[1 - yearAt]!
    return d.length <= 2 ? { y: Number(numbers[yearAt]), m, d: Number(d) } : undefined
  }
  // No four-digit year: the day sits next to the month name, the year last.
  if (at === 2 || numbers.some((n) => n.length > 2)) return undefined
  return { y: fullYear(numbers[1]!, thisYear), m, d: Number(numbers[0]) }
}

const readTime = (text: string): string | undefined => {
  const t = plain(text.trim()).replace(/\s+/g, " ")
  if (t === "noon" || t === "midday") return "12:00"
  if (t === "midnight") return "00:00"
  const match = /^(\d{1,2})(?:(?::|\.|h)(\d{2})?)?(?:[:.](\d{2}))?\s*(?:(a|p)\.?\s?m\.?|(h|o'?clock))?$/.exec(t)
  if (match === null) return undefined
  const [, hh, mm, ss, half] = match
  let h = Number(hh)
  const min = mm === undefined ? 0 : Number(mm)
  const sec = ss === undefined ? undefined : Number(ss)
  if (min > 59 || (sec !== undefined && sec > 59)) return undefined
  if (half !== undefined) {
    if (h < 1 || h > 12) return undefined
    h = (h % 12) + (half === "p" ? 12 : 0)
  } else {
    // A bare hour from 1 to 12 could be morning or evening.
    const bare = mm === undefined && !/h|:|\./.test(t.replace(/^\d+/, ""))
    if (h > 23 || (bare && h >= 1 && h <= 12)) return undefined
  }
  return `${pad(h)}:${pad(min)}${sec === undefined ? "" : `:${pad(sec)}`}`
}

/** ISO 8601 week of a date: the year its Thursday falls in, and its number. */
export const isoWeek = (y: number, m: number, d: number) => {
  const date = new Date(Date.UTC(y, m - 1, d))
  date.setUTCFullYear(y)
  date.setUTCDate(date.getUTCDate() + 4 - (date.getUTCDay() || 7))
  const yearStart = new Date(Date.UTC(date.getUTCFullYear(), 0, 1))
  yearStart.setUTCFullYear(date.getUTCFullYear())
  return { year: date.getUTCFullYear(), week: Math.ceil(((date.getTime() - yearStart.getTime()) / 86_400_000 + 1) / 7) }
}

const weeksIn = (year: number) => isoWeek(year, 12, 28).week

const readWeek = (text: string, lang: string | undefined, thisYear: number) => {
  const t = plain(text.trim())
  const match = /^(\d{4})\s*-?\s*w(?:eek)?\s*(\d{1,2})$/.exec(t) ?? /^(\d{4})\s+(?:week|kw)\s*(\d{1,2})$/.exec(t)
  const late = match === null ? /^(?:w|week|kw)\s*(\d{1,2})\s*[,/-]?\s*(\d{4})$/.exec(t) : null
  const [y, w] = match !== null ? [match[1], match[2]] : late !== null ? [late[2], late[1]] : [undefined, undefined]
  if (y !== undefined && w !== undefined) {
    return Number(w) >= 1 && Number(w) <= weeksIn(Number(y)) ? `${y}-W${pad(Number(w))}` : undefined
  }
  const date = readDate(text, lang, thisYear)
  if (date === undefined || !valid(date.y, date.m, date.d)) return undefined
  const { year, week } = isoWeek(date.y, date.m, date.d)
  return `${pad(year, 4)}-W${pad(week)}`
}

const readMonth = (text: string): string | undefined => {
  const t = plain(text.trim())
  let match = /^(\d{4})[-/.](\d{1,2})$/.exec(t)
  if (match !== null)
    return Number(match[2]) >= 1 && Number(match[2]) <= 12 ? `${match[1]}-${pad(Number(match[2]))}` : undefined
  match = /^(\d{1,2})[-/.](\d{4})$/.exec(t)
  if (match !== null)
    return Number(match[1]) >= 1 && Number(match[1]) <= 12 ? `${match[2]}-${pad(Number(match[1]))}` : undefined
  const words = t.split(/[\s,/.-]+/).filter((w) => w !== "")
  if (words.length !== 2) return undefined
  const [a, b] = words as [string, string]
  const m = monthOf(a) ?? monthOf(b)
  const y = /^\d{4}$/.test(a) ? a : /^\d{4}$/.test(b) ? b : undefined
  return m === undefined || y === undefined ? undefined : `${y}-${pad(m)}`
}

/** `1,234.5`, `1.234,5` (a decimal comma in a language that writes one), `−1`, `$95 000` → a plain decimal. */
export const readNumber = (text: string, lang?: string): string | undefined => {
  let t = text
    .trim()
    .replace(/[\u2212\u2012\u2013\u2014]/g, "-")
    .replace(/[\s\u00a0\u202f'’$€£¥₹%]/g, "")
    .replace(/^\+/, "")
  const negative = t.startsWith("-")
  if (negative) t = t.slice(1)
  if (!/^[\d.,]+$/.test(t) || !/\d/.test(t)) return undefined
  const comma = t.lastIndexOf(",")
  const dot = t.lastIndexOf(".")
  let whole: string
  if (comma >= 0 && dot >= 0) {
    const decimal = comma > dot ? "," : "."
    const thousands = decimal === "," ? "." : ","
    const [int, frac, ...rest] = t.split(decimal)
    if (rest.length > 0 || frac === undefined || frac.includes(thousands)) return undefined
    if (!/^\d{1,3}(?:[.,]\d{3})*$/.test(int!)) return undefined
    whole = `${int!.split(thousands).join("")}.${frac}`
  } else if (comma >= 0 || dot >= 0) {
    const sep = comma >= 0 ? "," : "."
    const grouped = new RegExp(`^\\d{1,3}(?:\\${sep}\\d{3})+$`).test(t)
    // A comma groups thousands in English and is the decimal point elsewhere; a dot is the decimal point in English.
    const groups = grouped && (sep === "," ? !decimalComma(lang) : decimalComma(lang))
    if (groups) whole = t.split(sep).join("")
    else {
      const parts = t.split(sep)
      if (parts.length !== 2) return undefined
      whole = `${parts[0] === "" ? "0" : parts[0]}.${parts[1]}`
    }
  } else whole = t
  if (!/^\d+(?:\.\d+)?$/.test(whole) && !/^\d+\.$/.test(whole)) return undefined
  whole = whole.replace(/\.$/, "").replace(/^0+(?=\d)/, "")
  return negative && !/^0(?:\.0+)?$/.test(whole) ? `-${whole}` : whole
}

const decimals = (s: string) => (s.split(".")[1] ?? "").length

const checkRange = (value: string, field: Field): Result.Result<Converted, string> => {
  const num = Number(value)
  const min = field.min === undefined || field.min === "" ? 0 : Number(field.min)
  const max = field.max === undefined || field.max === "" ? 100 : Number(field.max)
  if (num < min || num > max) return Result.fail(`a number between ${min} and ${max}`)
  const step = field.step === undefined || field.step === "" ? "1" : field.step
  if (step !== "any" && Number(step) > 0) {
    const scale = 10 ** Math.max(decimals(value), decimals(step), decimals(String(min)))
    const offset = Math.round((num - min) * scale)
    const unit = Math.round(Number(step) * scale)
    if (offset % unit !== 0) {
      const below = min + Math.floor(offset / unit) * Number(step)
      const near = [below, below + Number(step)].filter((v) => v >= min && v <= max).map((v) => Number(v.toFixed(10)))
      return Result.fail(`a number between ${min} and ${max} in steps of ${step} (such as ${near.join(" or ")})`)
    }
  }
  return Result.succeed({ value })
}

/**
 * `text` in the format of `field`'s kind, or the formats that kind accepts (for `invalid_input`). `thisYear` places
 * two-digit years.
 */
export const convert = (
  field: Field,
  text: string,
  thisYear = new Date().getFullYear()
): Result.Result<Converted, string> => {
  const refuse = (what: string = expected[field.kind]) => Result.fail(what)
  switch (field.kind) {
    case "date": {
      const date = readDate(text, field.lang, thisYear)
      if (date === undefined || !valid(date.y, date.m, date.d)) return refuse()
      const value = `${pad(date.y, 4)}-${pad(date.m)}-${pad(date.d)}`
      return Result.succeed(date.note === undefined ? { value } : { value, note: date.note })
    }
    case "time": {
      const time = readTime(text)
      return time === undefined ? refuse() : Result.succeed({ value: time })
    }
    case "month": {
      const month = readMonth(text)
      return month === undefined ? refuse() : Result.succeed({ value: month })
    }
    case "week": {
      const week = readWeek(text, field.lang, thisYear)
      return week === undefined ? refuse() : Result.succeed({ value: week })
    }
    case "datetime-local": {
      const iso = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)$/.exec(text.trim())
      if (iso !== null) {
        const date = convert({ ...field, kind: "date" }, iso[1]!, thisYear)
        const time = readTime(iso[2]!)
        return Result.isSuccess(date) && time !== undefined
          ? Result.succeed({ value: `${date.success.value}T${time}` })
          : refuse()
      }
      // The time is the last one to three words, after an optional "at" or comma.
      const words = text.trim().split(/\s+/)
      for (let n = 1; n <= Math.min(3, words.length - 1); n++) {
        const time = readTime(words.slice(-n).join(" "))
        if (time === undefined) continue
        const rest = words
          .slice(0, -n)
          .join(" ")
          .replace(/(?:,|\s+at|\s+@)$/i, "")
        const date = readDate(rest, field.lang, thisYear)
        if (date === undefined || !valid(date.y, date.m, date.d)) continue
        const value = `${pad(date.y, 4)}-${pad(date.m)}-${pad(date.d)}T${time}`
        return Result.succeed(date.note === undefined ? { value } : { value, note: date.note })
      }
      return refuse()
    }
    case "number": {
      const number = readNumber(text, field.lang)
      return number === undefined ? refuse() : Result.succeed({ value: number })
    }
    case "range": {
      const number = readNumber(text, field.lang)
      return number === undefined ? refuse() : checkRange(number, field)
    }
  }
}
