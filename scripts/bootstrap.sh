#!/bin/sh
# Sets up a fresh machine that has Node 20 and npm: installs pnpm 12.4.2 when it is missing, then the
# workspace's dependencies from the lockfile. Used by the README's Quick start and by CI.
set -eu
cd "$(dirname "$0")/.."

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
