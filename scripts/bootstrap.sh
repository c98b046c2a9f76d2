#!/bin/sh
# Sets up a fresh machine that has Node 20 and npm: installs bubblewrap (the local container runtime's
# confinement), zstd, Postgres (the SQL stores' tests start their own server) and shellcheck (the tests
# check the programs drivers run in sandboxes with it) when they are missing, pnpm 12.4.2 when it is missing,
# then the workspace's dependencies from the lockfile. Used by the README's Quick start and by CI.
set -eu
cd "$(dirname "$0")/.."

# The local container runtime refuses to start without bubblewrap (and util-linux's nsenter, prlimit,
# setpriv, unshare); zstd compresses checkpoint transfers in the sandbox (which sees this machine's tools) and
# decodes them in a driver whose Node has no zstd in zlib. As root with apt, missing ones are installed;
# otherwise say what to install and go on, since the rest of the workspace builds without them (transfers
# fall back to gzip without zstd). The host's tests create and start a Postgres cluster of their own with
# initdb and postgres, which Debian keeps in /usr/lib/postgresql/<version>/bin, off PATH; no server is
# started here.
if [ "$(uname -s)" = Linux ]; then
  missing=""
  command -v bwrap >/dev/null 2>&1 || missing="$missing bubblewrap"
  command -v zstd >/dev/null 2>&1 || missing="$missing zstd"
  if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    missing="$missing postgresql"
  fi
  # The service's tests make its store read-only for root with chattr +i.
  command -v chattr >/dev/null 2>&1 || missing="$missing e2fsprogs"
  command -v shellcheck >/dev/null 2>&1 || missing="$missing shellcheck"
  if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      apt-get update
      # shellcheck disable=SC2086 # one word per package
      DEBIAN_FRONTEND=noninteractive apt-get install -y $missing
    else
      echo "bootstrap: missing$missing (bubblewrap confines local containers, zstd compresses checkpoint" \
        "transfers, postgresql serves the SQL stores' tests, shellcheck checks sandbox scripts, e2fsprogs'" \
        "chattr makes a store read-only in tests; as root: apt-get install -y$missing)" >&2
    fi
  fi
fi
for tool in nsenter prlimit setpriv unshare; do
  command -v "$tool" >/dev/null 2>&1 || echo "bootstrap: $tool is missing; the local container runtime needs util-linux" >&2
done

# The sandbox image ships bun; local containers find it in /opt/open-managed-agents/bun/bin, which the
# confined container sees through its copy-on-write root. Installed from the npm registry's `bun` package
# (its platform binary) when missing; without write access there, say how and go on.
BUN_VERSION=1.3.14
BUN_PREFIX=/opt/open-managed-agents/bun
if [ "$(uname -s)" = Linux ] && [ ! -x "$BUN_PREFIX/bin/bun" ]; then
  if mkdir -p "$BUN_PREFIX/bin" 2>/dev/null && [ -w "$BUN_PREFIX" ]; then
    npm install --prefix "$BUN_PREFIX" --no-save --no-audit --no-fund "bun@$BUN_VERSION"
    ln -sf ../node_modules/bun/bin/bun.exe "$BUN_PREFIX/bin/bun"
    ln -sf ../node_modules/bun/bin/bun.exe "$BUN_PREFIX/bin/bunx"
    # The package places its platform binary in a postinstall step; run it where install scripts are off.
    "$BUN_PREFIX/bin/bun" --version >/dev/null 2>&1 || (cd "$BUN_PREFIX/node_modules/bun" && node install.js)
  else
    echo "bootstrap: bun is missing; local containers need it in $BUN_PREFIX/bin (as root: npm install --prefix $BUN_PREFIX bun@$BUN_VERSION)" >&2
  fi
fi

if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version)" != "12.4.2" ]; then
  npm install --global pnpm@12.4.2
fi

# better-sqlite3 compiles from source; when Node's headers are installed next to Node, node-gyp uses them
# instead of downloading them.
if [ -z "${npm_config_nodedir:-}" ]; then
  node_prefix=$(node -p 'require("node:path").resolve(process.execPath, "../..")')
  if [ -f "$node_prefix/include/node/node_version.h" ]; then
    npm_config_nodedir=$node_prefix
    export npm_config_nodedir
  fi
fi

export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false
pnpm install --frozen-lockfile
