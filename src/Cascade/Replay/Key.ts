/**
 * What a resolution is kept under: the page's site (its origin, so two sites never share one), the shape of its route
 * (ids left out, so every job's application form is one route) and the instruction, with the values it carries in
 * quotes written as placeholders (so the next applicant's name replays the same resolution with their own value).
 */
import type { Key } from "../../Store/Resolutions.ts"

/** A path segment that names one thing among many: a number, a hash or UUID, a slug ending in a long number. */
const idLike = (segment: string) =>
  /^\d+$/.test(segment) ||
  /^[0-9a-f]{8,}$/i.test(segment) ||
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(segment) ||
  /\d{4,}/.test(segment)

/** `https://jobs.example.com/acme/jobs/4821/apply?gh_src=x&step=2` → `/acme/jobs/:id/apply?gh_src&step`. */
export const routeOf = (url: URL) => {
  const path = url.pathname
    .split("/")
    .map((segment) => (idLike(segment) ? ":id" : segment.toLowerCase()))
    .join("/")
  const names = [...new Set([...url.searchParams.keys()])].sort()
  return names.length === 0 ? path : `${path}?${names.join("&")}`
}

/** The site and route of a page whose resolutions can be kept: an http(s) page. */
export const placeOf = (href: string): { readonly site: string; readonly route: string } | undefined => {
  if (!URL.canParse(href)) return undefined
  const url = new URL(href)
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined
  return { site: url.origin, route: routeOf(url) }
}

/** Values in double quotes (`"…"`, `“…”`): where an instruction carries what it types or chooses. */
const quoted = /"([^"]*)"|“([^”]*)”/g

/** The placeholder for the n-th quoted value of an instruction, in its text and in the arguments. */
export const placeholder = (n: number) => `{{value:${n}}}`

const normalized = (instruction: string) => instruction.trim().replace(/\s+/g, " ")

/** The quoted values of an instruction, in order. */
export const values = (instruction: string): ReadonlyArray<string> =>
  [...normalized(instruction).matchAll(quoted)].map((m) => m[1] ?? m[2] ?? "")

/** The instruction with the quoted values at `which` written as placeholders. */
const template = (instruction: string, which: ReadonlySet<number>) => {
  let n = -1
  return normalized(instruction).replace(quoted, (whole, straight: string | undefined) => {
    n++
    if (!which.has(n)) return whole
    return straight === undefined ? `“${placeholder(n)}”` : `"${placeholder(n)}"`
  })
}

/** Past this many quoted values only the instruction as written is a key (every subset would be one). */
const maxTemplated = 4

/**
 * Every key the instruction may have been kept under: as written, and with each subset of its quoted values as
 * placeholders (a kept resolution used the ones its arguments came from).
 */
export const candidates = (place: { site: string; route: string }, tool: Key["tool"], instruction: string) => {
  const count = values(instruction).length
  const subsets = count > maxTemplated ? 1 : 2 ** count
  return Array.from({ length: subsets }, (_, mask): Key => {
    const which = new Set(Array.from({ length: count }, (_, i) => i).filter((i) => (mask >> i) & 1))
    return { ...place, tool, instruction: template(instruction, which) }
  })
}

/**
 * The key a resolution is kept under and its arguments as kept: each argument that is one of the instruction's
 * quoted values becomes that value's placeholder, in the arguments and in the instruction.
 */
export const keep = (
  place: { site: string; route: string },
  tool: Key["tool"],
  instruction: string,
  args: ReadonlyArray<ReadonlyArray<string>>
): { readonly key: Key; readonly args: ReadonlyArray<ReadonlyArray<string>> } => {
  const said = values(instruction)
  const which = new Set<number>()
  const kept = args.map((list) =>
    list.map((arg) => {
      const at = said.indexOf(arg)
      if (at < 0 || said.length > maxTemplated) return arg
      which.add(at)
      return placeholder(at)
    })
  )
  return { key: { ...place, tool, instruction: template(instruction, which) }, args: kept }
}

/** Arguments as kept, with the instruction's values in place of their placeholders. */
export const fill = (args: ReadonlyArray<string>, instruction: string): ReadonlyArray<string> => {
  const said = values(instruction)
  return args.map((arg) => arg.replace(/\{\{value:(\d+)\}\}/g, (whole, n: string) => said[Number(n)] ?? whole))
}
