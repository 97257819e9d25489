import { execFileSync } from "node:child_process"
import { describe, expect, it } from "@effect/vitest"
import * as Shell from "../src/Shell.ts"

describe("a word printed for a shell", () => {
  it("reads back unchanged when a person pastes it into bash", () => {
    const words = [
      "http://127.0.0.1:8080/jobs/42?source=board&ref=a b",
      "/home/ada/My Applications/profile.json",
      "it's $HOME `id` *.json",
      "plain/path-1.json",
      ""
    ]
    for (const word of words) {
      const read = execFileSync("bash", ["-c", `printf %s ${Shell.word(word)}`], { encoding: "utf8" })
      expect(read).toBe(word)
    }
    expect(Shell.word("plain/path-1.json")).toBe("plain/path-1.json")
  })
})
