/**
 * The active tab printed by Chromium as a PDF (`Page.printToPDF`), as a person's "Save as PDF" makes it: the document
 * in print layout with its backgrounds, on Letter or A4 paper, portrait or landscape.
 */
import { Effect } from "effect"
import { ActionFailed } from "../Errors/Page.ts"
import type { SwitchyardError } from "../Errors.ts"
import type { OnPage } from "./Sandbox.ts"

export interface PdfOptions {
  readonly landscape?: boolean
  readonly paper?: "letter" | "a4"
}

export interface Printed {
  readonly mimeType: "application/pdf"
  readonly bytes: number
  readonly pages: number
  /** The PDF, base64. */
  readonly data: string
}

const papers = { letter: { paperWidth: 8.5, paperHeight: 11 }, a4: { paperWidth: 8.27, paperHeight: 11.69 } }

export const print = (page: OnPage, options: PdfOptions = {}): Effect.Effect<Printed, SwitchyardError> =>
  page
    .run((cdp, sessionId) =>
      cdp.send(
        "Page.printToPDF",
        { printBackground: true, landscape: options.landscape ?? false, ...papers[options.paper ?? "letter"] },
        sessionId
      )
    )
    .pipe(
      Effect.timeoutOrElse({
        duration: 30_000,
        orElse: () =>
          Effect.fail(new ActionFailed({ sideEffect: "none", message: "Chromium did not print the page within 30 s" }))
      }),
      Effect.map(({ data }) => {
        const pdf = Buffer.from(data, "base64")
        // Each page is one `/Type /Page` object (the tree's root is `/Type /Pages`).
        const pages = (pdf.toString("latin1").match(/\/Type\s*\/Page(?!s)/g) ?? []).length
        return { mimeType: "application/pdf" as const, bytes: pdf.length, pages, data }
      })
    )
