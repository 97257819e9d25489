/**
 * The page's elements as a person sees them, each with a reference to act on: Playwright's AI snapshot
 * (`ariaSnapshotJSON({ mode: "ai", boxes: true })`: every frame, cross-origin ones included, and open shadow roots;
 * `[ref=eN]` resolved by the `aria-ref=` selector), named and placed in context by Elements/Snapshot.ts, plus what a
 * scan of each frame's DOM adds (Elements/Scan.ts): rich-text editors and controls without a role, referenced as `xN`.
 * A read visits each frame once (Elements/Pass.ts: whether it changed, its scan, an extract's facts), before the
 * snapshot or, where a new read is all but certain, beside it. A page just loaded or clicked is read ahead, in the
 * background, so that the next sentence act or extract finds its elements kept; reads take turns, and acts wait for
 * them (`acting`), so a read's marks never meet an act's. Past 400 lines: the reads, what they keep and their turns
 * share one closure per page.
 */
import type { Frame, Locator, Page } from "playwright-core"
import type { Element as PageElement } from "../AccessibilityTree.ts"
import type { Child } from "./Elements/Nodes.ts"

export type { Child, SnapshotNode } from "./Elements/Nodes.ts"

import type { RawFacts } from "../PageFacts.ts"
import * as HandedOut from "./Elements/HandedOut.ts"
import type { PassInput, PassResult } from "./Elements/Pass.ts"
import * as Pass from "./Elements/Pass.ts"
import { editable, emptyScan, type FrameScan, scanFrame } from "./Elements/Scan.ts"
import { type FrameHints, fromSnapshot } from "./Elements/Snapshot.ts"
import { located, placed } from "./Held.ts"

/** Collects the iframe nodes' references, to name each frame by its iframe's title. */
const iframeRefs = (roots: ReadonlyArray<Child>): Array<string> =>
  roots.flatMap((child) =>
    typeof child === "string"
      ? []
      : [
          ...(child.role === "iframe" && child.ref !== undefined ? [child.ref] : []),
          ...iframeRefs(child.children ?? [])
        ]
  )

/** One read of the page: the snapshot's tree, each iframe's title by its reference, and the elements named from it. */
export interface Reading {
  readonly tree: ReadonlyArray<Child>
  readonly frameTitles: ReadonlyMap<string, string>
  readonly elements: ReadonlyArray<PageElement>
}

/** The page's facts (PageFacts.ts) read in the same visit of each frame as its elements: text up to `maxText`. */
export interface FactsWanted {
  readonly maxText: number
  readonly tables: boolean
}

/** The elements of a page and what their references point at; one per connected page. */
export interface Inventory {
  /** Reads every frame's elements now; earlier references stay valid while their elements keep role and name. */
  readonly read: (timeoutMs: number) => Promise<Array<PageElement>>
  /**
   * The elements of the last read while no frame's document changed since (nor scrolled, nor resized), else read now
   * (`kept` says which). `"values"`: nor what its form controls show (values and ticks, which typing changes without
   * changing the document); `"names"`: kept ones name and place what the page shows, their values may be older.
   */
  readonly current: (
    timeoutMs: number,
    what: "names" | "values",
    facts?: FactsWanted
  ) => Promise<{
    readonly elements: Array<PageElement>
    readonly kept: boolean
    /** With `facts`: the facts of the frames that gave them in time (the page's and its first twenty child frames). */
    readonly facts: ReadonlyMap<Frame, RawFacts>
  }>
  /** The element a reference names (`e12`, `f2e5`, `x3`, also written `aria-ref=e12`), or undefined. */
  readonly locate: (ref: string) => Locator | undefined
  /** The element as last read under a reference this engine handed out: the last read's, and the most recent before
   * it (Elements/HandedOut.ts); references do not survive reconnecting. */
  readonly described: (ref: string) => PageElement | undefined
  /** The last read whole, tree included (browser.snapshot renders it). */
  readonly latest: () => Reading | undefined
  /**
   * Reads the page's elements in the background when a frame changed since the last read (what `current` with
   * `"names"` does), bounded by `timeoutMs`, and its facts when `facts` asks; a read or `current` asked meanwhile
   * waits for it and finds them kept.
   */
  readonly ahead: (timeoutMs: number, facts?: FactsWanted) => void
  /** An act begins: resolves once no read is under way (an act marks its element only then: a read marks the iframes
   * it names), and the next extract no longer counts on a read made ahead. */
  readonly acting: () => Promise<void>
}

/** `promise`, or `fallback` once it has failed or taken longer than `ms` (a frame whose page is busy or gone). */
export const within = <A>(ms: number, promise: Promise<A>, fallback: A): Promise<A> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  return Promise.race([
    promise.catch(() => fallback),
    new Promise<A>((resolve) => {
      timer = setTimeout(() => resolve(fallback), ms)
    })
  ]).finally(() => clearTimeout(timer))
}

/** Starts `start` once the commands already asked of Playwright have gone out (its client and server hand messages on
 * with `setImmediate`, then send at once), so the page runs them first. */
const afterSent = <A>(start: () => Promise<A>): Promise<A> =>
  new Promise<void>((resolve) => setTimeout(resolve, 0)).then(start)

const refPattern = /^(?:aria-ref=)?((?:f\d+)?e\d+|x\d+)$/

/** The bare reference in `e12` or `aria-ref=e12`, or undefined when the text is not a reference. */
export const refOf = (text: string) => refPattern.exec(text.trim())?.[1]

/** Where a reference handed out by the scan points: an editor by its index among the frame's editors, a control
 * without a role by its path (and its text, so a re-rendered page does not send an action elsewhere). */
type Scanned =
  | { readonly frame: Frame; readonly index: number }
  | { readonly frame: Frame; readonly path: string; readonly text: string }

/** The text a found element started with, whatever its case and spacing. */
const startingWith = (text: string) =>
  new RegExp(
    `^\\s*${text
      .slice(0, 80)
      .replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
      .replace(/\s+/g, "\\s+")}`,
    "i"
  )

/** One frame's visit of a read (Elements/Pass.ts), or undefined when the frame did not answer in time. */
type Visited = {
  readonly frame: Frame
  readonly result: PassResult | undefined
  /** The visit went out a second time (its document had lost it), so perhaps after a snapshot sent beside it. */
  readonly late: boolean
}

export const inventory = (page: Page): Inventory => {
  const handedOut = HandedOut.make()
  let latest: Reading | undefined
  /** Every frame's generation (Elements/Generation.ts) just before the last read began; unknown when one did not say. */
  let readAt: string | undefined
  /** Each frame's last scan and the generation it was taken at: it holds while that generation does. */
  let kept = new Map<Frame, { readonly generation: string; readonly scan: FrameScan }>()
  /** Frames whose document holds the visit (Elements/Pass.ts): a navigation starts a document without it. */
  const installed = new WeakSet<Frame>()
  /** Whether the last read (or check that it stands) was made ahead with no act since: an extract then counts on it. */
  let readAhead = false
  /** Whether a frame navigated since the last read began: its elements are then surely to be read again. */
  let navigatedSince = false
  page.on("framenavigated", (frame) => {
    installed.delete(frame)
    navigatedSince = true
  })
  // Playwright builds its injected script once per document, on the first query or snapshot: about 55 ms of the
  // page's main thread here, the larger part of the first read after a load. A page whose DOM is parsed but which
  // still waits for its images, fonts or late scripts has it built meanwhile, off the next call's path. One that loads
  // at once leaves it to the read ahead: built now, it would hold up the navigation's answer instead.
  let loading = false
  page.on("domcontentloaded", () => {
    loading = true
    setTimeout(() => {
      if (loading && !page.isClosed())
        void page
          .mainFrame()
          .locator(":root")
          .count()
          .catch(() => 0)
    }, 50)
  })
  page.on("load", () => {
    loading = false
  })
  /** Each frame's last facts, the bounds they were read with and the generation they were read at: they hold while it
   * does (its text is its DOM, its fields' values are in it too). */
  const keptFacts = new WeakMap<
    Frame,
    { readonly generation: string; readonly bounds: string; readonly facts: RawFacts }
  >()
  const boundsOf = (facts: NonNullable<PassInput["facts"]>) => `${facts.maxText}:${facts.tables}`
  /** Visits every frame at once: generations, scans where the kept ones no longer hold, facts when asked (the kept ones
   * while they hold). */
  const visitAll = (what: PassInput["what"], facts: PassInput["facts"], waitMs?: number): Promise<Array<Visited>> => {
    const main = page.mainFrame()
    // The facts of the page and of its first twenty child frames, as an extract reads them.
    const withFacts = new Set([
      main,
      ...page
        .frames()
        .filter((f) => f !== main)
        .slice(0, 20)
    ])
    return Promise.all(
      page.frames().map(async (frame) => {
        const wanted = withFacts.has(frame) ? facts : null
        const held = wanted === null ? undefined : keptFacts.get(frame)
        const input = {
          known: kept.get(frame)?.generation ?? null,
          what,
          facts: wanted,
          factsAt: held !== undefined && wanted !== null && held.bounds === boundsOf(wanted) ? held.generation : null
        }
        let late = false
        const result = await within(
          waitMs ?? (input.facts === null ? 1_000 : 2_000),
          (installed.has(frame)
            ? frame.evaluate(Pass.visiting, input).then((r) => {
                if (r !== null) return r
                late = true
                return frame.evaluate(Pass.installing, input)
              })
            : frame.evaluate(Pass.installing, input)
          ).then((r) => {
            installed.add(frame)
            const result = Pass.parsed(r)
            if (result.facts !== undefined && wanted !== null)
              keptFacts.set(frame, { generation: result.generation, bounds: boundsOf(wanted), facts: result.facts })
            if (wanted === null || result.facts !== undefined || held?.generation !== result.generation) return result
            return { ...result, facts: held.facts }
          }),
          undefined
        )
        return { frame, result, late }
      })
    )
  }
  /** The facts each frame's visit read (or found kept). */
  const factsOf = (visits: ReadonlyArray<Visited>) =>
    new Map(visits.flatMap((v) => (v.result?.facts === undefined ? [] : [[v.frame, v.result.facts] as const])))
  /** The frames' generations joined, or undefined when a frame did not say. */
  const joined = (visits: ReadonlyArray<Visited>) =>
    visits.some((v) => v.result === undefined) ? undefined : visits.map((v) => v.result!.generation).join("|")
  const scanned = new Map<string, Scanned>()
  let next = 0
  const keyed = new Map<string, string>()
  /** The scan's reference for what it found at `key` (a frame and a place in it), the same on every read. */
  const refAt = (key: string) => {
    let ref = keyed.get(key)
    if (ref === undefined) {
      ref = `x${++next}`
      keyed.set(key, ref)
    }
    return ref
  }

  /** The frame each iframe reference shows, asked only for frames whose scan found something to add. */
  const framesOf = (refs: ReadonlyArray<string>, wanted: ReadonlySet<Frame>) =>
    wanted.size === 0
      ? Promise.resolve(new Map<Frame, string>())
      : Promise.all(
          refs.map(async (ref) => {
            const handle = await page
              .locator(`aria-ref=${ref}`)
              .elementHandle({ timeout: 1_000 })
              .catch(() => null)
            const frame = await handle?.contentFrame().catch(() => null)
            await handle?.dispose().catch(() => undefined)
            return [frame ?? null, ref] as const
          })
        ).then(
          (pairs) => new Map(pairs.filter((p): p is readonly [Frame, string] => p[0] !== null && wanted.has(p[0])))
        )

  const snapshotOf = (timeoutMs: number) =>
    page.ariaSnapshotJSON({ mode: "ai", boxes: true, timeout: timeoutMs }) as Promise<ReadonlyArray<Child>>

  /** Reads the page's elements after its frames' visits; `taken` is a snapshot already under way, sent after them. */
  const read = async (timeoutMs: number, visited?: ReadonlyArray<Visited>, taken?: Promise<ReadonlyArray<Child>>) => {
    readAt = undefined
    navigatedSince = false
    const visits = visited ?? (await visitAll("read", null))
    const before = joined(visits)
    const snapshot = await (taken ?? snapshotOf(timeoutMs))
    const frames = page.frames()
    const main = page.mainFrame()
    const iframes = iframeRefs(snapshot)
    const byFrame = new Map(visits.map((v) => [v.frame, v.result]))
    // Each frame's scan (cross-origin ones too: Playwright attaches to them) for what the snapshot leaves out or
    // shows too plainly: the visit's, the kept one while its generation holds, else one now (a frame that came
    // since, or whose values alone changed); each iframe for the title that names it.
    const [scans, titles] = await Promise.all([
      Promise.all(
        frames.map(async (frame) => {
          const result = byFrame.get(frame)
          const held = kept.get(frame)
          const scan =
            result?.scan ??
            (result !== undefined && held?.generation === result.generation
              ? held.scan
              : await within(1_000, frame.evaluate(scanFrame, editable), emptyScan as FrameScan))
          return { frame, scan, generation: result?.generation }
        })
      ),
      Promise.all(
        iframes.map(async (ref) => {
          const title = await page
            .locator(`aria-ref=${ref}`)
            .getAttribute("title", { timeout: 1_000 })
            .catch(() => null)
          return [ref, title ?? ""] as const
        })
      )
    ])
    // A scan taken after its frame's visit is kept under the visit's generation: should the frame have changed in
    // between, the next visit sees a newer one and scans again.
    kept = new Map(
      scans.flatMap(({ frame, scan, generation }) =>
        generation === undefined ? [] : [[frame, { generation, scan }] as const]
      )
    )
    const hinted = new Set(
      scans
        .filter(
          ({ frame, scan }) =>
            frame !== main && (scan.files.length > 0 || scan.unlabelled.length > 0 || scan.extras.length > 0)
        )
        .map(({ frame }) => frame)
    )
    const iframeOf = await within(1_000, framesOf(iframes, hinted), new Map<Frame, string>())
    const hints = new Map<string, FrameHints>()
    for (const { frame, scan } of scans) {
      const key = frame === main ? "" : iframeOf.get(frame)
      if (key === undefined) continue
      const index = frames.indexOf(frame)
      hints.set(key, {
        files: scan.files,
        unlabelled: scan.unlabelled,
        extras: scan.extras.map((extra) => {
          const ref = refAt(`${index}:${frame.url()}:${extra.path}:${extra.name}`)
          scanned.set(ref, { frame, path: extra.path, text: extra.text })
          return { ref, role: extra.role, name: extra.name, box: extra.box }
        })
      })
    }
    const secrets = new Set(scans.flatMap(({ scan }) => scan.passwords).filter((v) => v !== ""))
    const elements = fromSnapshot(snapshot, new Map(titles), hints).map((e) =>
      e.value !== undefined && secrets.has(e.value) ? { ...e, value: "[redacted]" } : e
    )
    for (const { frame, scan } of scans) {
      scan.editors.forEach((editor, index) => {
        if (!editor.visible || !editor.host) return
        const ref = refAt(`${frames.indexOf(frame)}:${frame.url()}:${index}`)
        scanned.set(ref, { frame, index })
        elements.push({
          ref,
          role: "textbox",
          name: editor.name,
          also: [],
          within: [],
          clickable: false,
          disabled: false,
          value: editor.value,
          ...(frame === main ? {} : { frame: `iframe ${frame.url()}` })
        })
      })
    }
    latest = { tree: snapshot, frameTitles: new Map(titles), elements }
    readAt = before
    handedOut.add(elements)
    // A scan's references live while they are handed out: their keys hold the frame's URL, so they would otherwise
    // pile up page after page.
    for (const [key, ref] of keyed) {
      if (handedOut.has(ref)) continue
      keyed.delete(key)
      scanned.delete(ref)
    }
    return elements
  }

  const locate = (text: string) => {
    const ref = refOf(text)
    if (ref === undefined) return undefined
    if (ref.startsWith("x")) {
      const at = scanned.get(ref)
      if (at === undefined) return undefined
      if ("index" in at) return placed(at.frame, at.frame.locator(editable).nth(at.index), editable)
      const found = at.frame.locator(at.path)
      return placed(at.frame, at.text === "" ? found : found.filter({ hasText: startingWith(at.text) }), at.path)
    }
    return located(page.mainFrame(), `aria-ref=${ref}`)
  }

  /** `patient`: each frame's visit may take the whole `timeoutMs` (a read in the background keeps nobody waiting on a
   * busy page, and a frame that did not answer would leave nothing kept). */
  const current = async (timeoutMs: number, what: "names" | "values", facts?: FactsWanted, patient = false) => {
    const asked = facts ?? null
    const known = latest !== undefined && readAt !== undefined
    // Where a new read is all but certain (none kept, a frame navigated since, or an extract, which asks for values
    // too and so reads again after any typing), the snapshot goes out beside the visits instead of after their
    // answer: a turn of the event loop after them, and the page runs one session's commands in the order they
    // arrive, so each frame's generation is taken before the snapshot reads it.
    const likely = !known || navigatedSince || (asked !== null && !readAhead)
    const visiting = visitAll(known ? what : "read", asked, patient ? timeoutMs : undefined)
    const taken = likely ? afterSent(() => snapshotOf(timeoutMs)) : undefined
    // Whether the last read still stands and, where it does not, what the new read starts from: one visit.
    const visits = await visiting
    const now = known ? joined(visits) : undefined
    const same =
      now !== undefined &&
      readAt !== undefined &&
      (what === "values" ? now === readAt : Pass.names(now) === Pass.names(readAt))
    // A visit sent again may have run after the snapshot beside it: that snapshot cannot stand for its generation.
    const usable = visits.some((v) => v.late) ? undefined : taken
    if (latest !== undefined && same) {
      taken?.catch(() => undefined)
      return { elements: [...latest.elements], kept: true, facts: factsOf(visits) }
    }
    if (usable === undefined) taken?.catch(() => undefined)
    return { elements: await read(timeoutMs, visits, usable), kept: false, facts: factsOf(visits) }
  }

  /** The read under way, if any: reads take turns (two at once would mix their generations and references). */
  let turn: Promise<unknown> = Promise.resolve()
  const inTurn = <A>(f: () => Promise<A>): Promise<A> => {
    const run = turn.then(f, f)
    turn = run.catch(() => undefined)
    return run
  }
  /** A read ahead queued and not started yet: one is enough. */
  let queued = false

  return {
    read: (timeoutMs) => inTurn(() => read(timeoutMs)),
    current: (timeoutMs, what, facts) => inTurn(() => current(timeoutMs, what, facts)),
    locate,
    described: (text) => handedOut.get(refOf(text) ?? text),
    latest: () => latest,
    ahead: (timeoutMs, facts) => {
      if (queued || page.isClosed()) return
      queued = true
      void inTurn(async () => {
        queued = false
        if (page.isClosed()) return
        await current(timeoutMs, "names", facts, true)
        readAhead = true
      }).catch(() => undefined)
    },
    acting: () => {
      readAhead = false
      return turn.then(() => undefined)
    }
  }
}
