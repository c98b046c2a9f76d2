#!/bin/sh
# Runs a command with every tool's telemetry and network lookups switched off.
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_HIDE_BANNER=true
exec "$@"
