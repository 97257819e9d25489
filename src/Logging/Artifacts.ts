/**
 * Where attempt artifacts go (seed 003): a screenshot for every attempt and a snapshot on failure, under the
 * trace's `artifacts/`. A reference with a do-nothing default, so code that captures artifacts needs no layer.
 */
import { Context, Effect } from "effect"

export interface ArtifactSink {
  /** Capture a screenshot after every attempt (failures included). */
  readonly screenshots: boolean
  /** Capture the accessibility tree and nearby DOM after a failed attempt. */
  readonly snapshots: boolean
  readonly write: (traceId: string, name: string, data: Uint8Array | object) => Effect.Effect<void>
}

/** The file an artifact is stored as, under its trace's directory. */
export const fileOf = (name: string) => `artifacts/${name.replaceAll(/[^A-Za-z0-9._-]/g, "_").slice(0, 128) || "_"}`

export const Artifacts = Context.Reference<ArtifactSink>("switchyard/Artifacts", {
  defaultValue: () => ({ screenshots: false, snapshots: false, write: () => Effect.void })
})
