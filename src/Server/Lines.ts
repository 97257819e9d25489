/**
 * Line-delimited input with a size cap, for the stdio surfaces: each line is handed over whole; a line over the cap
 * is dropped while it arrives (never buffered whole) and reported once it ends, and reading goes on at the next line.
 * A line that is not UTF-8 is reported too, as it could not be read as text.
 */

/** What the reader hands over: a line's text, or why a line was not read. */
export type Line =
  | { readonly _tag: "Line"; readonly text: string }
  | { readonly _tag: "TooLong"; readonly bytes: number }
  | { readonly _tag: "NotUtf8" }

/** The most a stdio message may hold: the MCP SDK's limit (10 MB), for every stdio surface. */
export const maxLineBytes = 10 * 1024 * 1024

const decoder = new TextDecoder("utf-8", { fatal: true })

/**
 * A reader of chunks into lines. `push` takes the next chunk and returns the lines it completed; `end` returns what
 * was left without a final newline.
 */
export const reader = (maxBytes: number = maxLineBytes) => {
  let parts: Array<Buffer> = []
  let size = 0
  /** Bytes of the current line dropped so far, or -1 while it is being kept. */
  let dropped = -1

  const finish = (tail: Buffer): Line | undefined => {
    if (dropped >= 0) {
      const bytes = dropped + tail.length
      dropped = -1
      return { _tag: "TooLong", bytes }
    }
    const whole = parts.length === 0 ? tail : Buffer.concat([...parts, tail])
    parts = []
    size = 0
    const end = whole.length > 0 && whole[whole.length - 1] === 0x0d ? whole.length - 1 : whole.length
    if (end === 0) return undefined
    try {
      return { _tag: "Line", text: decoder.decode(whole.subarray(0, end)) }
    } catch {
      return { _tag: "NotUtf8" }
    }
  }

  const keep = (piece: Buffer) => {
    if (dropped >= 0) {
      dropped += piece.length
      return
    }
    if (size + piece.length > maxBytes) {
      dropped = size + piece.length
      parts = []
      size = 0
      return
    }
    parts.push(piece)
    size += piece.length
  }

  const push = (chunk: Buffer): Array<Line> => {
    const lines: Array<Line> = []
    let start = 0
    for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, start)) {
      const piece = chunk.subarray(start, at)
      if (dropped >= 0 || size + piece.length > maxBytes) {
        keep(piece)
        const line = finish(Buffer.alloc(0))
        if (line !== undefined) lines.push(line)
      } else {
        const line = finish(piece)
        if (line !== undefined) lines.push(line)
      }
      start = at + 1
    }
    if (start < chunk.length) keep(chunk.subarray(start))
    return lines
  }

  const end = (): Array<Line> => {
    const line = finish(Buffer.alloc(0))
    return line === undefined ? [] : [line]
  }

  return { push, end }
}
