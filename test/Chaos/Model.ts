/**
 * The scripted model behind the chaos service's Stagehand (dom mode): it answers act requests of the form
 * `fill "Label" with "value"` and `click "Name"` from the accessibility tree in the prompt, observe with nothing,
 * extract with a fixed text. Faults are injected on top with `LlmServer.faultNext`.
 */
import * as LlmServer from "../fixtures/LlmServer.ts"

const answer = (value: unknown): LlmServer.Reply => ({ json: LlmServer.chatCompletion(JSON.stringify(value)) })

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** The id of the tree line `[0-12] <role>: <name>` whose name is `name`, any role. */
const elementId = (prompt: string, name: string) =>
  new RegExp(`\\[(\\d+-\\d+)\\] [\\w ]+: ${escapeRegExp(name)}(?:\\s|$)`, "m").exec(prompt)?.[1]

const instructionOf = (prompt: string) => /given the following action: (.*?)\.\s/s.exec(prompt)?.[1] ?? ""

export const script: LlmServer.Script = (request) => {
  const properties = Object.keys(LlmServer.requestedSchema(request)?.properties ?? {})
  const prompt = LlmServer.promptText(request)
  if (properties.includes("action") && properties.includes("twoStep")) {
    const instruction = instructionOf(prompt)
    const fill = /^fill "([^"]+)" with "([^"]*)"$/.exec(instruction)
    const click = /^click "([^"]+)"$/.exec(instruction)
    const [name, method, args] = fill ? [fill[1]!, "fill", [fill[2]!]] : click ? [click[1]!, "click", []] : []
    const id = name === undefined ? undefined : elementId(prompt, name)
    return answer({
      action: id === undefined ? null : { elementId: id, description: name, method, arguments: args },
      twoStep: false
    })
  }
  if (properties.length === 1 && properties[0] === "elements") return answer({ elements: [] })
  if (properties.includes("progress") && properties.includes("completed")) {
    return answer({ progress: "read the page", completed: true })
  }
  return answer({ extraction: "a sign-up form" })
}
