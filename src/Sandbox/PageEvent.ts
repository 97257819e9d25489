/**
 * What happened on the session's pages besides what a call asked for — a tab opened or closed, a dialog, a file
 * chosen, a download — kept until the next answer reports it, so an agent is never left unaware of it.
 */
import type { OpenDialog } from "./PageLink/Dialogs.ts"
import type { Download } from "./PageLink/Downloads.ts"
import type { RestoreReason, SavedPage } from "./SavedPage.ts"

/** A tab of the session's browser, as answers list it. */
export interface Tab {
  /** Stable for the tab's life: what `browser.tabs` takes to switch to or close it. */
  readonly id: string
  /** Its place among the session's tabs, from 0 in the order they opened. */
  readonly index: number
  readonly url: string
  readonly title: string
  /** The page the session works on: every engine level drives it. */
  readonly active: boolean
}

export type PageEvent =
  | { readonly event: "tab_opened"; readonly message: string; readonly tab: Tab }
  | { readonly event: "tab_closed"; readonly message: string; readonly tab: string; readonly active?: Tab }
  | {
      readonly event: "dialog_answered"
      readonly message: string
      readonly dialog: OpenDialog
      readonly accepted: boolean
      readonly by: "agent" | "policy"
    }
  | { readonly event: "files_chosen"; readonly message: string; readonly files: ReadonlyArray<string> }
  | { readonly event: "download"; readonly message: string; readonly download: Download }
  | {
      readonly event: "restored"
      readonly message: string
      /** What the session came back from: its browser or tab crashed, it was hibernated, its runner was lost. */
      readonly reason: RestoreReason
      readonly url: string
      readonly cookies: number
      readonly storage: number
    }

const quoted = (text: string) => JSON.stringify(text.length > 120 ? `${text.slice(0, 117)}…` : text)

export const dialogAnswered = (dialog: OpenDialog, accepted: boolean, by: "agent" | "policy"): PageEvent => ({
  event: "dialog_answered",
  message: `the page's ${dialog.type} dialog ${quoted(dialog.message)} was ${accepted ? "accepted" : "dismissed"}${by === "policy" ? " by the configured dialogs mode" : ""}`,
  dialog,
  accepted,
  by
})

export const downloaded = (download: Download): PageEvent => ({
  event: "download",
  message:
    download.state === "completed"
      ? `downloaded ${download.name} (${download.bytes} bytes) to ${download.path}`
      : download.state === "in_progress"
        ? `downloading ${download.name} (${download.bytes} bytes so far); a later answer reports when it ends`
        : download.error !== undefined
          ? download.error.message
          : `the download of ${download.name} was cancelled`,
  download
})

const restoredFrom: Record<RestoreReason, string> = {
  crash: "after its browser or tab crashed",
  hibernation: "from hibernation (its browser was closed to free a slot for another session)",
  failover: "on this runner after the one holding it stopped"
}

export const restored = (saved: SavedPage, reason: RestoreReason): PageEvent => {
  const storage = [...saved.localStorage, ...saved.sessionStorage].reduce((n, o) => n + o.entries.length, 0)
  return {
    event: "restored",
    message: `the session's page was restored ${restoredFrom[reason]}: ${saved.url} with ${saved.cookies.length} cookies and ${storage} storage entries`,
    reason,
    url: saved.url,
    cookies: saved.cookies.length,
    storage
  }
}
