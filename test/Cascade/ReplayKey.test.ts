/** What a resolution is kept under: site, route shape and the instruction with its values as placeholders. */
import { assert, describe, it } from "@effect/vitest"
import * as Keys from "../../src/Cascade/Replay/Key.ts"

describe("replay keys", () => {
  it("a route keeps its words and query names, and leaves out ids, hashes and values", () => {
    const place = (url: string) => Keys.placeOf(url)
    assert.deepStrictEqual(place("https://boards.example.com/acme/jobs/4821930/apply?gh_src=x1&step=2#top"), {
      site: "https://boards.example.com",
      route: "/acme/jobs/:id/apply?gh_src&step"
    })
    assert.strictEqual(
      place("https://x.example/apply/3f2a9c1e-52b7-4a6e-9d1c-1f2e3d4c5b6a/Form")?.route,
      "/apply/:id/form"
    )
    assert.strictEqual(place("https://x.example/jobs/senior-engineer-20931")?.route, "/jobs/:id")
    assert.strictEqual(place("https://x.example/jobs/senior-engineer")?.route, "/jobs/senior-engineer")
    assert.strictEqual(place("http://127.0.0.1:4100/a.html")?.site, "http://127.0.0.1:4100")
    assert.isUndefined(place("about:blank"))
    assert.isUndefined(place("file:///etc/passwd"))
    assert.isUndefined(place("not a url"))
  })

  it("an argument the instruction quotes is kept as its placeholder, in the key and the arguments", () => {
    const place = { site: "https://a.example", route: "/apply" }
    const kept = Keys.keep(place, "act", '  fill "Email"   with "ada@example.com" ', [["ada@example.com"]])
    assert.strictEqual(kept.key.instruction, 'fill "Email" with "{{value:1}}"')
    assert.deepStrictEqual(kept.args, [["{{value:1}}"]])
    // The next applicant's instruction finds the same key, and gets their own value back.
    const next = 'fill "Email" with "grace@example.com"'
    assert.include(
      Keys.candidates(place, "act", next).map((k) => k.instruction),
      kept.key.instruction
    )
    assert.deepStrictEqual(Keys.fill(kept.args[0]!, next), ["grace@example.com"])
  })

  it("a target's name stays in the key; several values each get their own placeholder", () => {
    const place = { site: "https://a.example", route: "/apply" }
    const click = Keys.keep(place, "act", 'click "Apply" in "Data Engineer"', [[]])
    assert.strictEqual(click.key.instruction, 'click "Apply" in "Data Engineer"')
    const several = Keys.keep(place, "act", 'select "Python", "SQL" in "Skills"', [["Python", "SQL"]])
    assert.strictEqual(several.key.instruction, 'select "{{value:0}}", "{{value:1}}" in "Skills"')
    assert.deepStrictEqual(Keys.fill(several.args[0]!, 'select "Go", "Rust" in "Skills"'), ["Go", "Rust"])
    // A value the level changed (not one the instruction quotes) is kept as it is.
    const changed = Keys.keep(place, "act", "type hello into the search box", [["hello"]])
    assert.strictEqual(changed.key.instruction, "type hello into the search box")
    assert.deepStrictEqual(changed.args, [["hello"]])
  })

  it("a secret's reference is a quoted value like any other: kept as a placeholder", () => {
    const place = { site: "https://a.example", route: "/login" }
    const kept = Keys.keep(place, "act", 'fill "Password" with "{{secret:PW}}"', [["{{secret:PW}}"]])
    assert.strictEqual(kept.key.instruction, 'fill "Password" with "{{value:1}}"')
    assert.deepStrictEqual(Keys.fill(kept.args[0]!, 'fill "Password" with "{{secret:PW}}"'), ["{{secret:PW}}"])
  })
})
