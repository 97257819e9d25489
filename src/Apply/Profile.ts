/**
 * The applicant: who they are, where their résumé is, and answers to questions a form may ask. Read from a JSON
 * file; the résumé path is taken relative to that file. It travels inside the workflow's payload, so a runner that
 * takes the application over needs no copy of the file — only of the résumé at the same path.
 */
import { readFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { Effect, Schema } from "effect"
import { InvalidInput } from "../Errors/Page.ts"

export const Profile = Schema.Struct({
  firstName: Schema.String,
  lastName: Schema.String,
  email: Schema.String,
  phone: Schema.optional(Schema.String),
  /** Path of the résumé to upload (PDF). */
  resume: Schema.String,
  /** Other questions by their label (matched case-insensitively, ignoring punctuation). */
  answers: Schema.optional(Schema.Record(Schema.String, Schema.String))
})
export type Profile = typeof Profile.Type

export const load = (file: string): Effect.Effect<Profile, InvalidInput> =>
  Effect.try({
    try: () => JSON.parse(readFileSync(file, "utf8")) as unknown,
    catch: (cause) =>
      new InvalidInput({ field: "profile", message: `cannot read the profile ${file}: ${String(cause)}` })
  }).pipe(
    Effect.flatMap((json) =>
      Schema.decodeUnknownEffect(Profile)(json).pipe(
        Effect.mapError(
          (issue) => new InvalidInput({ field: "profile", message: `the profile ${file} is not valid: ${issue}` })
        )
      )
    ),
    Effect.map((profile) => ({ ...profile, resume: resolve(dirname(file), profile.resume) }))
  )

const compact = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim()

/** The value the profile has for a form field, by its label or name; `undefined` when it has none. */
export const valueFor = (profile: Profile, field: { readonly label: string; readonly name: string }) => {
  const words = compact(`${field.label} ${field.name}`)
  for (const [question, answer] of Object.entries(profile.answers ?? {})) {
    if (compact(field.label) === compact(question)) return answer
  }
  if (/\bfirst ?name\b|firstname/.test(words)) return profile.firstName
  if (/\blast ?name\b|lastname|surname/.test(words)) return profile.lastName
  if (/\bfull name\b|^name\b|^name name$/.test(words)) return `${profile.firstName} ${profile.lastName}`
  if (/e ?mail/.test(words)) return profile.email
  if (/phone|mobile/.test(words)) return profile.phone
  return undefined
}
