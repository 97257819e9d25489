# Sourced by bin/switchyard and bin/test: makes sure a Node >= 22.19, the locked
# dependencies and a Chromium are present, then exports PATH and CHROME_PATH; bin/test also calls
# ensure_vnc_tools and ensure_postgresql for the takeover and fleet tests.
# Idempotent: a second run only checks stamps and returns in well under a second.

SWITCHYARD_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SWITCHYARD_NODE_VERSION="24.21.0"

say() { printf 'switchyard: %s\n' "$*" >&2; }

node_ok() { # is "$1" a Node >= 22.19?
  "$1" -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=19)?0:1)' 2>/dev/null
}

ensure_node() {
  if command -v node >/dev/null 2>&1 && node_ok "$(command -v node)"; then return 0; fi
  local arch
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) say "no Node >= 22.19 and no prebuilt Node for $(uname -m); install Node 24 and retry"; return 1 ;;
  esac
  local dir="$SWITCHYARD_ROOT/.tools/node"
  local bin="$dir/node_modules/node-linux-$arch/bin"
  if ! node_ok "$bin/node"; then
    command -v npm >/dev/null 2>&1 || { say "npm is needed to fetch Node $SWITCHYARD_NODE_VERSION"; return 1; }
    say "system Node is older than 22.19: fetching Node $SWITCHYARD_NODE_VERSION from the npm registry"
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error \
      "node-linux-$arch@$SWITCHYARD_NODE_VERSION" >&2 || return 1
  fi
  export PATH="$bin:$PATH"
  # native builds must compile against this Node's headers, not the system one's
  export npm_config_nodedir="$(dirname "$bin")"
}

ensure_deps() {
  local stamp="$SWITCHYARD_ROOT/node_modules/.switchyard-lock"
  local want
  want="$(node -p 'process.versions.node' 2>/dev/null)-$(cksum <"$SWITCHYARD_ROOT/package-lock.json")"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return 0; fi
  say "installing dependencies (npm ci)"
  (cd "$SWITCHYARD_ROOT" && SCARF_ANALYTICS=false npm ci --no-audit --no-fund --loglevel=error >&2) || return 1
  printf '%s' "$want" >"$stamp"
}

ensure_chromium() {
  if [ -n "${CHROME_PATH:-}" ]; then
    [ -x "$CHROME_PATH" ] && return 0
    say "CHROME_PATH=$CHROME_PATH is not an executable file"; return 1
  fi
  local c
  for c in chromium chromium-browser google-chrome-stable google-chrome; do
    if command -v "$c" >/dev/null 2>&1; then export CHROME_PATH="$(command -v "$c")"; return 0; fi
  done
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "no Chromium found: installing Debian's chromium package"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >&2 || return 1
    export CHROME_PATH=/usr/bin/chromium
    return 0
  fi
  say "no Chromium found. Install one (Debian/Ubuntu: sudo apt-get install chromium) or set CHROME_PATH to its binary."
  return 1
}

# The human-takeover tests need Xvfb, x11vnc, websockify and noVNC. As root with apt they are installed; otherwise
# this says how to get them and those tests are skipped, each naming what is missing. Never fails.
ensure_vnc_tools() {
  local missing=()
  command -v Xvfb >/dev/null 2>&1 || missing+=(xvfb)
  command -v x11vnc >/dev/null 2>&1 || missing+=(x11vnc)
  command -v websockify >/dev/null 2>&1 || missing+=(websockify)
  [ -f /usr/share/novnc/vnc.html ] || missing+=(novnc)
  if [ "${#missing[@]}" -eq 0 ]; then return 0; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing the VNC takeover tools: ${missing[*]}"
    if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >&2; then
      return 0
    fi
    say "could not install ${missing[*]}: the VNC takeover tests will be skipped"
    return 0
  fi
  say "the VNC takeover tests need ${missing[*]} (Debian/Ubuntu: sudo apt-get install ${missing[*]}); they will be skipped"
  return 0
}

# Debian's PostgreSQL for the fleet tests (each test starts its own server on loopback in a temp dir).
ensure_postgresql() {
  if compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null; then return 0; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing PostgreSQL from Debian for the fleet tests"
    if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql) >&2; then
      return 0
    fi
    say "could not install postgresql: the fleet tests will be skipped"
    return 0
  fi
  say "the fleet tests need PostgreSQL (Debian/Ubuntu: sudo apt-get install postgresql); they will be skipped"
  return 0
}

# The service's bundled entry (scripts/bundle.ts), built again when a source, the lock file or the script changed since:
# prints its path. A start from it loads a handful of files where src/Main.ts loads ~550 modules. When it cannot be
# built (no bundler installed), prints nothing and the service runs from source.
ensure_bundle() {
  local bundles="$SWITCHYARD_ROOT/.bundle"
  local current="$bundles/current"
  if [ -f "$current" ] && [ -f "$bundles/$(cat "$current")/Main.js" ] &&
    [ -z "$(find "$SWITCHYARD_ROOT/src" "$SWITCHYARD_ROOT/package-lock.json" "$SWITCHYARD_ROOT/scripts/bundle.ts" \
      -newer "$current" -print -quit 2>/dev/null)" ]; then
    printf '%s\n' "$bundles/$(cat "$current")/Main.js"
    return 0
  fi
  say "bundling the service's entry (once per change of its sources)"
  local built
  # A failed build (no bundler, a folder that cannot be written) leaves an older build behind: run from source then,
  # never from a build of other sources.
  if built="$(node "$SWITCHYARD_ROOT/scripts/bundle.ts" 2> >(sed 's/^/switchyard: bundle: /' >&2))" &&
    [ -f "$built" ]; then
    printf '%s\n' "$built"
  else
    say "could not bundle the entry: running from source (slower to start)"
  fi
}

switchyard_bootstrap() {
  ensure_node && ensure_deps && ensure_chromium
}
