/**
 * The applicant the job-application tests apply as, with a résumé written into the test's own folder: the profile
 * itself (what `apply.start` takes) or a profile file beside the résumé (what `switchyard apply --profile` reads).
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"

/** Who applies; `resume` is the résumé's path (relative to the profile file, or absolute). */
export const applicant = (resume: string) => ({
  firstName: "Ada",
  lastName: "Lovelace",
  email: "ada@example.com",
  phone: "+44 20 7946 0000",
  resume
})

export type Applicant = ReturnType<typeof applicant>

/** Another applicant, or the same with other details: what differs from Ada. */
export type Changes = Partial<Omit<Applicant, "resume">>

const writeResume = (dir: string, file: string) => writeFileSync(join(dir, file), "%PDF-1.4\n% Ada Lovelace, analyst\n")

/** Writes the résumé into `dir` (as `file`) and answers the profile naming it by its absolute path. */
export const profileIn = (dir: string, changes: Changes = {}, file = "resume.pdf"): Applicant => {
  writeResume(dir, file)
  return { ...applicant(join(dir, file)), ...changes }
}

/** Writes the résumé and a profile file naming it beside it into `dir`; answers the profile file's path. */
export const profileFileIn = (dir: string, changes: Changes = {}, name = "profile.json"): string => {
  writeResume(dir, "resume.pdf")
  const path = join(dir, name)
  writeFileSync(path, JSON.stringify({ ...applicant("resume.pdf"), ...changes }))
  return path
}
