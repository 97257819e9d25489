/**
 * Where a person finds an unnamed field's label on the screen, from the boxes the snapshot measures: laid over the
 * field (a floating label), to its left on the same line, in the row above it and aligned with its column (a grid of
 * labels over a grid of inputs), or under it — never across another control, never a heading further up.
 */

/** An element's border box in its frame's viewport, in CSS pixels (`getBoundingClientRect`). */
export interface Box {
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
}

/** A piece of text a person reads on the page, and where. */
export interface Placed {
  readonly text: string
  readonly box: Box
}

/** The candidates around a field, by where they sit; each the nearest of its kind. */
export interface Nearby {
  readonly over?: string
  readonly left?: string
  /** The text on its line right before it (within a label's margin), not one across the line. */
  readonly leftClose?: string
  readonly above?: string
  readonly below?: string
}

/** The largest gap between a label and its field, above or below it (a label's margin, not a section's). */
export const rowGap = 40
/** The largest gap between a label and its field on the same line. */
const lineGap = 250

const right = (b: Box) => b.x + b.width
const bottom = (b: Box) => b.y + b.height

export const visible = (b: Box | undefined): b is Box => b !== undefined && b.width > 0 && b.height > 0

/** Same box, within a pixel: the same element measured by two readers. */
export const sameBox = (a: Box, b: Box) =>
  Math.abs(a.x - b.x) <= 1 &&
  Math.abs(a.y - b.y) <= 1 &&
  Math.abs(a.width - b.width) <= 1 &&
  Math.abs(a.height - b.height) <= 1

export const contains = (outer: Box, inner: Box) =>
  inner.x >= outer.x - 1 &&
  inner.y >= outer.y - 1 &&
  right(inner) <= right(outer) + 1 &&
  bottom(inner) <= bottom(outer) + 1

const overlapX = (a: Box, b: Box) => Math.min(right(a), right(b)) - Math.max(a.x, b.x)
const overlapY = (a: Box, b: Box) => Math.min(bottom(a), bottom(b)) - Math.max(a.y, b.y)

/** A label over or under a field reads as its column's when it starts where the field starts or centres over it. */
const aligned = (label: Box, field: Box) => {
  if (overlapX(label, field) <= 0) return false
  const centre = label.x + label.width / 2
  return Math.abs(label.x - field.x) <= 32 || (centre >= field.x && centre <= right(field))
}

/** A label sits on the field's line when its middle is within the field's height. */
const sameLine = (label: Box, field: Box) => {
  const middle = label.y + label.height / 2
  return middle >= field.y - 4 && middle <= bottom(field) + 4
}

/** Whether a control other than the field lies between a label and its field (then the label is that control's). */
const between = (label: Box, field: Box, controls: ReadonlyArray<Box>, direction: "left" | "above" | "below") =>
  controls.some((c) => {
    if (sameBox(c, field) || contains(c, field) || contains(c, label)) return false
    switch (direction) {
      case "left":
        return c.x >= right(label) - 2 && right(c) <= field.x + 2 && overlapY(c, field) > 0
      case "above":
        return c.y >= bottom(label) - 2 && bottom(c) <= field.y + 2 && overlapX(c, field) > 0
      default:
        return c.y >= bottom(field) - 2 && bottom(c) <= label.y + 2 && overlapX(c, field) > 0
    }
  })

/** Whether a label at `label` may name the field at `field` from where it sits: on its line to its left, or above it
 * in its column within `reach` pixels. */
export const plausible = (label: Box, field: Box, reach = rowGap, line = lineGap) =>
  (sameLine(label, field) && right(label) <= field.x + 4 && field.x - right(label) <= line) ||
  (bottom(label) <= field.y + 4 && field.y - bottom(label) <= reach && aligned(label, field))

/** Whether a label sits right under a field, in its column (a sublabel). */
export const below = (label: Box, field: Box) =>
  label.y >= bottom(field) - 4 && label.y - bottom(field) <= 12 && aligned(label, field)

/** The texts around a field, each the nearest of its kind and none across another control. */
export const nearby = (field: Box, texts: ReadonlyArray<Placed>, controls: ReadonlyArray<Box>): Nearby => {
  let over: { text: string; d: number } | undefined
  let left: { text: string; d: number } | undefined
  let above: { text: string; d: number } | undefined
  let below: { text: string; d: number } | undefined
  const fieldArea = field.width * field.height
  for (const { text, box } of texts) {
    if (!visible(box) || text === "") continue
    const centreX = box.x + box.width / 2
    const centreY = box.y + box.height / 2
    if (
      box.width * box.height < fieldArea &&
      centreX >= field.x &&
      centreX <= right(field) &&
      centreY >= field.y &&
      centreY <= bottom(field)
    ) {
      const d = Math.abs(box.x - field.x) + Math.abs(box.y - field.y)
      if (over === undefined || d < over.d) over = { text, d }
      continue
    }
    if (sameLine(box, field) && right(box) <= field.x + 4) {
      const d = field.x - right(box)
      if (d <= lineGap && (left === undefined || d < left.d) && !between(box, field, controls, "left")) {
        left = { text, d }
      }
      continue
    }
    if (!aligned(box, field)) continue
    if (bottom(box) <= field.y + 4) {
      const d = field.y - bottom(box) + Math.abs(box.x - field.x) / 100
      if (d <= rowGap && (above === undefined || d < above.d) && !between(box, field, controls, "above")) {
        above = { text, d }
      }
    } else if (box.y >= bottom(field) - 4) {
      const d = box.y - bottom(field) + Math.abs(box.x - field.x) / 100
      if (d <= rowGap && (below === undefined || d < below.d) && !between(box, field, controls, "below")) {
        below = { text, d }
      }
    }
  }
  return {
    ...(over === undefined ? {} : { over: over.text }),
    ...(left === undefined ? {} : { left: left.text }),
    ...(left === undefined || left.d > rowGap ? {} : { leftClose: left.text }),
    ...(above === undefined ? {} : { above: above.text }),
    ...(below === undefined ? {} : { below: below.text })
  }
}

/** Texts by the bands of the page they span: those near a field are looked up without reading every text. */
export const byBand = <T extends Placed>(texts: ReadonlyArray<T>) => {
  const band = 100
  const bands = new Map<number, Array<T>>()
  for (const t of texts) {
    const first = Math.floor(t.box.y / band)
    const last = Math.min(first + 50, Math.floor(bottom(t.box) / band))
    for (let b = first; b <= last; b++) {
      const list = bands.get(b)
      if (list === undefined) bands.set(b, [t])
      else list.push(t)
    }
  }
  /** The texts whose band is within `margin` pixels above or below a box. */
  return (box: Box, margin: number): Array<T> => {
    const found = new Set<T>()
    for (let b = Math.floor((box.y - margin) / band); b <= Math.floor((bottom(box) + margin) / band); b++) {
      for (const t of bands.get(b) ?? []) found.add(t)
    }
    return [...found]
  }
}
