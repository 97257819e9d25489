/**
 * `extract` in the Magnitude worker: a JSON Schema as magnitude's own zod 3 (JsonSchema.ts), the page as markdown
 * (frames included, without touching the live page) and a screenshot, sent to magnitude's extract model.
 */
import { createRequire } from "node:module"
import type { Page } from "playwright-core"
import { InvalidSchema, toZod, type Zod3 } from "./JsonSchema.ts"
import { browserProblem, Failed, isBamlError, llmProblem } from "./Problem.ts"

/** magnitude-core's extract model: private in its types but a plain field at runtime. */
export interface ExtractModel {
  extract(instructions: string, schema: unknown, screenshot: unknown, domContent: string): Promise<unknown>
}

interface MarkdownLibrary {
  partitionHtml(html: string, options: Record<string, unknown>): unknown
  serializeToMarkdown(partition: unknown, options: Record<string, unknown>): string
}

// BrowserAgent.extract's options for turning the page into markdown for the model.
const partitionOptions = {
  extractImages: true,
  extractForms: true,
  extractLinks: true,
  skipNavigation: false,
  minTextLength: 3,
  includeOriginalHtml: false,
  includeMetadata: true
}
const markdownOptions = {
  includeMetadata: false,
  includePageNumbers: true,
  includeElementIds: false,
  includeCoordinates: false,
  preserveHierarchy: true,
  escapeSpecialChars: true,
  includeFormFields: true,
  includeImageMetadata: true
}

/**
 * The page's HTML with its frames' content appended. BrowserAgent.extract gets the same by replacing every iframe in
 * the live page with a static copy of its content, which breaks the page (scripts, form state) for later calls.
 */
const pageHtml = async (page: Page) => {
  const html = await page.content()
  const children = page.frames().filter((frame) => frame !== page.mainFrame())
  const frames = await Promise.all(children.map((frame) => frame.content().catch(() => "")))
  const bodies = frames.map((frame) => /<body[^>]*>([\s\S]*)<\/body>/i.exec(frame)?.[1] ?? "").filter((b) => b !== "")
  if (bodies.length === 0) return html
  const appended = bodies.map((body) => `<div data-frame-content="true">${body}</div>`).join("")
  return /<\/body>/i.test(html) ? html.replace(/<\/body>(?![\s\S]*<\/body>)/i, `${appended}</body>`) : html + appended
}

/** What extract needs of the agent (Agent.ts): its page focus, screenshot and extract model. */
export interface Extracting {
  readonly focus: () => Promise<void>
  readonly screenshot: () => Promise<unknown>
  readonly extractModel: ExtractModel
}

/**
 * Loads what magnitude-core itself resolves: its own zod 3 (extract needs that one) and its HTML-to-markdown library.
 * Call it after magnitude-core is loaded (its logger reads the environment then).
 */
export const load = () => {
  const fromMagnitude = createRequire(createRequire(import.meta.url).resolve("magnitude-core"))
  const zod = fromMagnitude("zod") as Zod3
  const markdown = fromMagnitude("magnitude-extract") as MarkdownLibrary

  /** The extracted value for `jsonSchema` (a string when there is none); failures are thrown as Problems. */
  return async (page: Page, agent: Extracting, instruction: string, jsonSchema: unknown): Promise<unknown> => {
    let schema: ReturnType<typeof toZod>
    try {
      schema = jsonSchema === undefined ? zod.string().describe("the requested information") : toZod(zod, jsonSchema)
    } catch (error) {
      if (!(error instanceof InvalidSchema)) throw error
      throw new Failed({
        source: "invalid",
        name: error.name,
        field: "schema",
        message: `the schema cannot be used by magnitude: ${error.message}`,
        sideEffect: "none"
      })
    }
    await agent.focus()
    try {
      // BrowserAgent.extract's steps, without its iframe rewriting: page markdown, a screenshot, the extract model.
      const partition = markdown.partitionHtml(await pageHtml(page), partitionOptions)
      const content = markdown.serializeToMarkdown(partition, markdownOptions)
      const screenshot = await agent.screenshot()
      return await agent.extractModel.extract(instruction, schema, screenshot, content)
    } catch (error) {
      throw new Failed(isBamlError(error) ? llmProblem(error, "none") : browserProblem(error, "none"))
    }
  }
}
