// Adds lock entries for optional platform packages (other OSes/CPUs) that npm left out of package-lock.json,
// without which `npm ci` refuses the lock ("Missing: … from lock file"). npm drops them when the registry it
// resolves against does not serve those platforms' builds. Run after `npm install` changes the lock.
import { readFileSync, writeFileSync } from "node:fs"

const path = new URL("../package-lock.json", import.meta.url)
const lock = JSON.parse(readFileSync(path, "utf8"))
const packages = lock.packages

const platformOf = (name) => {
  const os = ["android", "darwin", "linux", "win32", "freebsd", "openharmony", "sunos", "aix"].find((o) =>
    name.includes(o)
  )
  const cpu = ["arm64", "x64", "ia32", "arm", "ppc64", "riscv64", "s390x", "loong64"].find((c) => name.includes(c))
  const libc = name.includes("musl") ? "musl" : name.includes("-gnu") ? "glibc" : undefined
  return { ...(cpu ? { cpu: [cpu] } : {}), ...(libc ? { libc: [libc] } : {}), ...(os ? { os: [os] } : {}) }
}

let added = 0
for (const [key, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const target = `node_modules/${name}`
    if (packages[target] || packages[`${key}/node_modules/${name}`]) continue
    packages[target] = { version, ...(entry.dev ? { dev: true } : {}), optional: true, ...platformOf(name) }
    added++
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : a > b ? 1 : 0))
)
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`)
console.log(`complete-lock: added ${added} optional platform entries`)
