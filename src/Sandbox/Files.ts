/**
 * Which local files a call may put into a page's file input: only files under the configured roots, judged on their
 * real paths, so neither `..` nor a symlink reaches outside them; and, for a browser running as another user, copies
 * it can read. A call that named files must have put them somewhere: a click that opened no chooser is a failure.
 */
import { chown, copyFile, mkdtemp, realpath, stat } from "node:fs/promises"
import { basename, isAbsolute, join, relative, resolve, sep } from "node:path"
import { Effect } from "effect"
import { BrowserUnavailable } from "../Errors/Browser.ts"
import { ActionFailed, InvalidInput } from "../Errors/Page.ts"
import { PolicyRejected } from "../Errors/Service.ts"

/** Whether `path` is `root` or inside it (both real, absolute paths). */
const inside = (root: string, path: string) => {
  const rel = relative(root, path)
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel))
}

/**
 * The real paths of `files`, each an existing regular file under one of `roots`; relative paths are taken from the
 * service's working directory. A path outside every root is `rejected_by_policy`; a missing one `invalid_input`.
 */
export const confine = (
  roots: ReadonlyArray<string>,
  files: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<string>, PolicyRejected | InvalidInput> =>
  Effect.gen(function* () {
    if (files.length === 0) return yield* new InvalidInput({ field: "files", message: "name at least one file" })
    const realRoots = yield* Effect.forEach(roots, (root) =>
      Effect.promise(() => realpath(resolve(root)).catch(() => resolve(root)))
    )
    return yield* Effect.forEach(files, (file) =>
      Effect.gen(function* () {
        const asked = resolve(file)
        const outside = () =>
          new PolicyRejected({
            field: "files",
            message: `${file} is outside the folders uploads may come from (${realRoots.join(", ")}; uploads.roots)`
          })
        // The path as written must be inside a root before the file system is asked anything about it.
        if (!realRoots.some((root) => inside(root, asked))) return yield* outside()
        const real = yield* Effect.tryPromise(() => realpath(asked)).pipe(
          Effect.mapError(() => new InvalidInput({ field: "files", message: `no such file: ${file}` }))
        )
        if (!realRoots.some((root) => inside(root, real))) return yield* outside()
        const info = yield* Effect.tryPromise(() => stat(real)).pipe(
          Effect.mapError(() => new InvalidInput({ field: "files", message: `cannot read ${file}` }))
        )
        if (!info.isFile()) return yield* new InvalidInput({ field: "files", message: `${file} is not a file` })
        return real
      })
    )
  })

/**
 * Copies of `files` for a browser running as another user, who cannot read a file in a private folder (a file
 * chooser's answer is a path Chromium reads when the form is sent): one folder per call under `root`, owned by that
 * user, so the site sees each file's own name.
 */
export const copiesFor = (
  files: ReadonlyArray<string>,
  user: { readonly uid: number; readonly gid: number },
  root: string
): Effect.Effect<ReadonlyArray<string>, BrowserUnavailable> =>
  Effect.tryPromise({
    try: async () => {
      const folder = await mkdtemp(join(root, "call-"))
      await chown(folder, user.uid, user.gid)
      const copied: Array<string> = []
      for (const file of files) {
        const copy = join(folder, basename(file))
        await copyFile(file, copy)
        await chown(copy, user.uid, user.gid)
        copied.push(copy)
      }
      return copied
    },
    catch: (cause) =>
      new BrowserUnavailable({ message: `cannot give the browser's user a copy of ${files.join(", ")}`, cause })
  })

/** An act that put files into a file input itself (the model-free level), rather than clicking something; for a
 * form, one of its fields that did. */
export const setInputDirectly = (result: unknown): boolean =>
  typeof result === "object" &&
  result !== null &&
  (("action" in result && /^setinputfiles$/i.test((result as { action?: { method?: string } }).action?.method ?? "")) ||
    ("fields" in result &&
      Array.isArray((result as { fields?: unknown }).fields) &&
      (result as { fields: ReadonlyArray<unknown> }).fields.some(setInputDirectly)))

/** A click that named files but opened no file chooser: the files went nowhere, and the agent must not think so. */
export const noChooser = (action: string) =>
  Effect.fail(
    new ActionFailed({
      action,
      sideEffect: "possible",
      message:
        "the click opened no file chooser, so no file was chosen; name the file input itself, or the button or drop zone that opens it"
    })
  )
