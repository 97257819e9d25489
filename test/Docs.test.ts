/**
 * The documentation, checked against the tree: every relative link and anchor in README.md and docs/ resolves, every
 * setting the pages name is read by src/ and every one src/ reads is documented, as is every error type and tool.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { assert, describe, it } from "@effect/vitest"

const root = resolve(import.meta.dirname, "..")
const docs = join(root, "docs")
const read = (path: string) => readFileSync(path, "utf8")
const pages = [join(root, "README.md"), ...readdirSync(docs).flatMap((f) => (f.endsWith(".md") ? [join(docs, f)] : []))]

/** Markdown without its fenced code blocks. */
const withoutFences = (markdown: string) => markdown.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, "")

/** What a reader sees as prose and links: no code blocks, and no brackets inside code spans. */
const prose = (markdown: string) =>
  withoutFences(markdown).replace(/(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, (span) => span.replace(/[[\]()]/g, " "))

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
const anchors = (markdown: string): ReadonlySet<string> => {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const [, heading] of withoutFences(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const text = heading!.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-")
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    out.add(n === 0 ? slug : `${slug}-${n}`)
  }
  return out
}

/** Every link target in a page's prose: `[text](target)`, with text over several lines allowed. */
const links = (markdown: string) =>
  [...prose(markdown).matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!)

/** A link's problem, if it has one: a missing file, or an anchor that no heading of its file makes. */
const broken = (page: string, target: string): string | undefined => {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined // http:, https:, mailto:: not this tree's
  const [path = "", anchor] = target.split("#", 2)
  const file = path === "" ? page : resolve(dirname(page), decodeURIComponent(path))
  if (!existsSync(file)) return "no such file"
  if (anchor === undefined || !file.endsWith(".md")) return undefined
  return anchors(read(file)).has(decodeURIComponent(anchor).toLowerCase()) ? undefined : "no such heading"
}

/** Whether a `/` after this code opens a regular expression rather than dividing. */
const startsRegex = (before: string) =>
  before === "" || "(,=:[!&|?{};+-*%<>~^".includes(before.at(-1)!) || /\b(return|typeof|case|yield)$/.test(before)

/**
 * A TypeScript file split into its code and its string contents, comments dropped: what the program itself names.
 * A template literal's holes read as `\0` in its text (their code goes to the code); regular expressions are skipped.
 */
const lex = (source: string) => {
  let i = 0
  let code = ""
  const literals: Array<string> = []
  const quoted = (quote: string) => {
    let text = ""
    i++
    while (i < source.length && source[i] !== quote) {
      if (source[i] === "\\") {
        text += source[i + 1] ?? ""
        i += 2
      } else text += source[i++]
    }
    i++
    return text
  }
  const template = () => {
    let text = ""
    i++
    while (i < source.length && source[i] !== "`") {
      if (source[i] === "\\") {
        text += source[i + 1] ?? ""
        i += 2
      } else if (source[i] === "$" && source[i + 1] === "{") {
        i += 2
        text += "\0"
        codeUntilBrace()
      } else text += source[i++]
    }
    i++
    return text
  }
  const regex = () => {
    let inClass = false
    i++
    while (i < source.length && source[i] !== "\n" && (inClass || source[i] !== "/")) {
      if (source[i] === "\\") i++
      else if (source[i] === "[") inClass = true
      else if (source[i] === "]") inClass = false
      i++
    }
    i++
    while (/[a-z]/.test(source[i] ?? "")) i++
  }
  /** Code up to the `}` that closes a template hole (or the end of the file). */
  const codeUntilBrace = () => {
    let depth = 0
    while (i < source.length) {
      const c = source[i]!
      const next = source[i + 1]
      if (c === "/" && next === "/") while (i < source.length && source[i] !== "\n") i++
      else if (c === "/" && next === "*") {
        const end = source.indexOf("*/", i + 2)
        i = end < 0 ? source.length : end + 2
        code += " "
      } else if (c === '"' || c === "'") {
        literals.push(quoted(c))
        code += " "
      } else if (c === "`") {
        literals.push(template())
        code += " "
      } else if (c === "/" && startsRegex(code.slice(-16).trimEnd())) {
        regex()
        code += " "
      } else {
        if (c === "}" && depth-- === 0) {
          i++
          return
        }
        if (c === "{") depth++
        code += c
        i++
      }
    }
  }
  codeUntilBrace()
  return { code, literals }
}

/** `SWITCHYARD_*` names as globs: a hole or a `<PLACEHOLDER>` is `*`, a name ending in `_` is a prefix. */
const asGlob = (name: string) => (name.endsWith("_") ? `${name}*` : name)
const globMatches = (glob: string, name: string) =>
  new RegExp(`^${glob.replace(/[^A-Z0-9_*]/g, "").replace(/\*/g, ".*")}$`).test(name)
const matchesAny = (name: string, globs: Iterable<string>) =>
  [...globs].some((glob) => globMatches(glob, name) || globMatches(name, glob))

const sourceFiles = (readdirSync(join(root, "src"), { recursive: true, encoding: "utf8" }) as Array<string>)
  .filter((f) => f.endsWith(".ts"))
  .map((f) => join(root, "src", f))

/** Every `SWITCHYARD_*` name the program reads or mentions to a user, outside comments. */
const namesInSource = (source: string): ReadonlySet<string> => {
  const { code, literals } = lex(source)
  const names = [
    ...[...code.matchAll(/\bSWITCHYARD_[A-Z0-9_]+/g)].map((m) => m[0]),
    ...literals.flatMap((text) => [...text.matchAll(/SWITCHYARD_[A-Z0-9_\0]*/g)].map((m) => m[0].replace(/\0/g, "*")))
  ]
  return new Set(names.map(asGlob))
}
const sourceNames = new Set(sourceFiles.flatMap((file) => [...namesInSource(read(file))]))

/**
 * Names src/ mentions that are not settings a user sets. Empty: test-only variables (`SWITCHYARD_TEST_*`) live in
 * test/, and the shell's own (`SWITCHYARD_ROOT`, `SWITCHYARD_NODE_VERSION`) in scripts/.
 */
const notSettings: ReadonlyArray<string> = []

/** The `SWITCHYARD_*` names a page mentions, as globs (`SWITCHYARD_SECRET_<NAME>` is `SWITCHYARD_SECRET_*`). */
const namesInPage = (markdown: string) =>
  new Set(
    [...markdown.matchAll(/SWITCHYARD_(?:[A-Z0-9_]|<[A-Z]+>)*/g)].map((m) => asGlob(m[0].replace(/<[A-Z]+>/g, "*")))
  )
const configurationPage = read(join(docs, "configuration.md"))
const documentedNames = namesInPage(configurationPage)

/** Each setting Config.ts declares: its key in the file and its environment names. */
const declared = [
  ...read(join(root, "src/Server/Config.ts")).matchAll(/\b(?:setting|optional)\(\s*"([\w.]+)",\s*\[([^\]]*)\]/g)
].map((m) => ({ key: m[1]!, env: [...m[2]!.matchAll(/"([A-Z0-9_]+)"/g)].map((e) => e[1]!) }))

describe("documentation", () => {
  it("every relative link and anchor resolves", () => {
    assert.isAtLeast(pages.length, 10)
    const bad = pages.flatMap((page) =>
      links(read(page)).flatMap((target) => {
        const problem = broken(page, target)
        return problem === undefined ? [] : [`${relative(root, page)}: ${target} (${problem})`]
      })
    )
    assert.deepStrictEqual(bad, [])
  })

  it("the README links every page of docs/", () => {
    const linked = new Set(links(read(join(root, "README.md"))).map((t) => resolve(root, t.split("#")[0]!)))
    assert.deepStrictEqual(
      pages.filter((page) => page.startsWith(docs) && !linked.has(page)).map((page) => relative(root, page)),
      []
    )
  })

  it("the README is a short start page", () => {
    assert.isAtMost(read(join(root, "README.md")).split("\n").length, 200)
  })

  it("every setting the documentation names is read by src/", () => {
    assert.isAtLeast(documentedNames.size, 50)
    const stale = pages.flatMap((page) =>
      [...namesInPage(read(page))]
        .filter((name) => !matchesAny(name, sourceNames))
        .map((name) => `${relative(root, page)}: ${name}`)
    )
    assert.deepStrictEqual(stale, [])
  })

  it("every SWITCHYARD_* name src/ reads is documented", () => {
    assert.isAtLeast(sourceNames.size, 50)
    assert.deepStrictEqual(
      [...sourceNames].filter((name) => !notSettings.includes(name) && !matchesAny(name, documentedNames)),
      []
    )
  })

  it("every configuration key and environment name Config.ts declares is documented", () => {
    assert.isAtLeast(declared.length, 50)
    const missing = declared.flatMap(({ key, env }) =>
      [`\`${key}\``, ...env.map((name) => `\`${name}\``)].filter((word) => !configurationPage.includes(word))
    )
    assert.deepStrictEqual(missing, [])
  })

  it("every error type and every tool has its entry", () => {
    const errorsPage = read(join(docs, "errors.md"))
    const types = readdirSync(join(root, "src/Errors")).flatMap((f) =>
      [...read(join(root, "src/Errors", f)).matchAll(/readonly type = "(\w+)"/g)].map((m) => m[1]!)
    )
    assert.isAtLeast(types.length, 30)
    assert.deepStrictEqual(
      types.filter((type) => !errorsPage.includes(`| \`${type}\` |`)),
      []
    )
    const toolsPage = read(join(docs, "tools.md"))
    const tools = ["src/Cascade/Tools.ts", "src/Cascade/PageTools.ts"].flatMap((f) =>
      [...read(join(root, f)).matchAll(/Tool\.make\(\s*"([\w.]+)"/g)].map((m) => m[1]!)
    )
    assert.isAtLeast(tools.length, 20)
    assert.deepStrictEqual(
      tools.filter((tool) => !toolsPage.includes(`| \`${tool}\``) && !toolsPage.includes(`, \`${tool}\``)),
      []
    )
  })

  it("the scanner sees names in code and strings, not in comments", () => {
    const sample = [
      "// SWITCHYARD_LINE_COMMENT",
      "/* SWITCHYARD_BLOCK_COMMENT */",
      "const quote = /[\"'`]/g // a regex with quotes does not open a string",
      "const a = env.SWITCHYARD_IN_CODE ?? 'SWITCHYARD_IN_STRING'",
      "const b = `SWITCHYARD_#{upper(p)}_API_KEY` + (1 / 2) + `x #{'SWITCHYARD_IN_HOLE'} y`",
      'if (key.startsWith("SWITCHYARD_PREFIX_")) {}'
    ]
      .join("\n")
      .replaceAll("#{", "$" + "{") // template holes, written so that this file holds none
    assert.deepStrictEqual([...namesInSource(sample)].sort(), [
      "SWITCHYARD_*_API_KEY",
      "SWITCHYARD_IN_CODE",
      "SWITCHYARD_IN_HOLE",
      "SWITCHYARD_IN_STRING",
      "SWITCHYARD_PREFIX_*"
    ])
  })

  it("the link checker finds a missing file and a missing heading", () => {
    const page = join(docs, "configuration.md")
    assert.strictEqual(broken(page, "nowhere.md"), "no such file")
    assert.strictEqual(broken(page, "security.md#no-such-heading"), "no such heading")
    assert.strictEqual(broken(page, "security.md#secrets"), undefined)
    assert.deepStrictEqual(links("see [a `x](y)` b](c.md) and `[d](e.md)`\n```\n[f](g.md)\n```"), ["c.md"])
  })
})
