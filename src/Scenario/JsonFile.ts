/**
 * JSON as the suite's committed files are written (scenario files, the regression baseline): what fits in the width
 * stays on one line, the rest opens up, so a change to a file reads as a small diff.
 */

const oneLine = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(oneLine).join(", ")}]`
    : typeof value === "object" && value !== null
      ? `{${Object.entries(value)
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => `${JSON.stringify(k)}: ${oneLine(v)}`)
          .join(", ")}}`
      : JSON.stringify(value)

/** JSON as the scenario files are written: objects and arrays that fit in `width` on one line, others opened up. */
export const stringify = (value: unknown, width = 118, indent = 0): string => {
  const flat = oneLine(value)
  const pad = "  ".repeat(indent)
  if (typeof value !== "object" || value === null || flat.length + pad.length <= width) return flat
  const inner = "  ".repeat(indent + 1)
  if (Array.isArray(value)) {
    return `[\n${value.map((v) => inner + stringify(v, width, indent + 1)).join(",\n")}\n${pad}]`
  }
  const entries = Object.entries(value).filter(([, v]) => v !== undefined)
  return `{\n${entries
    .map(([k, v]) => {
      const key = `${JSON.stringify(k)}: `
      return inner + key + stringify(v, width - key.length, indent + 1)
    })
    .join(",\n")}\n${pad}}`
}
