/**
 * The page as a Stagehand prompt shows it to the scripted model: the accessibility-tree lines
 * (`[0-53] button: Submit`) and how well an element's name matches a phrase, shared by its act and extract answers.
 */

export interface Line {
  readonly id: string
  readonly role: string
  readonly name: string
  readonly depth: number
}

const lineRe = /^(\s*)\[(\d+-\d+)\] (.*)$/

/** Every `[frame-node] role: name` line of a prompt's accessibility tree, in order. */
export const parseTree = (text: string): ReadonlyArray<Line> =>
  text.split("\n").flatMap((raw) => {
    const match = lineRe.exec(raw)
    if (match === null) return []
    const rest = match[3]!.trim()
    const colon = rest.indexOf(": ")
    return [
      {
        id: match[2]!,
        depth: match[1]!.length,
        role: (colon < 0 ? rest : rest.slice(0, colon)).trim(),
        // States the tree appends (`option: Red [selected]`) are not part of the name.
        name:
          colon < 0
            ? ""
            : rest
                .slice(colon + 2)
                .replace(/(\s\[[a-z -]+\])+$/i, "")
                .trim()
      }
    ]
  })

const normalize = (s: string) =>
  s
    .toLowerCase()
    .replace(/[*:]+\s*$/g, "")
    .replace(/\s*\*\s*/g, " ")
    .replace(/\s+/g, " ")
    .trim()
export const compact = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "")
const stopWords = new Set(["the", "a", "an", "on", "to", "in", "into", "of", "button", "link", "field", "box", "page"])
export const words = (s: string) =>
  normalize(s)
    .split(/[^\p{L}\p{N}@.+-]+/u)
    .filter((w) => w !== "" && !stopWords.has(w))

/** How well an element's name matches the phrase an instruction gave: 0 (not at all) to 4 (equal). */
export const score = (name: string, target: string) => {
  const n = normalize(name)
  const t = normalize(target)
  if (n === "" || t === "") return 0
  if (n === t) return 4
  if (n.startsWith(t) || t.startsWith(n)) return 3
  if (n.includes(t)) return 2
  const wanted = words(t)
  const have = new Set(words(n))
  return wanted.length > 0 && wanted.every((w) => have.has(w)) ? 1 : 0
}
