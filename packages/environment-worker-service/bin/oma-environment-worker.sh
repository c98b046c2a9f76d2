#!/bin/sh
# oma-environment-worker: starts the service (dist/bin.js) in Node with the process settings that keep a
# large checkpoint's or restore's peak memory down (see the README, "Memory"):
#   --max-semi-space-size=2       caps V8's young generation, which otherwise grows to 32 MiB under the
#                                 allocation rate of a transfer;
#   --heap-growing-percent=30     lets V8's old generation grow by 30% of what survived its last full
#                                 collection before the next one, instead of up to four times that;
#   MALLOC_MMAP_THRESHOLD_=65536  has glibc give freed blocks of 64 KiB and more back to the system.
# OMA_NODE_ARGS replaces the Node flags (empty for none), a MALLOC_MMAP_THRESHOLD_ already set is kept, and
# OMA_NODE names the node binary (default: node on PATH).
set -eu

self=$(readlink -f "$0")
package=$(dirname "$(dirname "$self")")

MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-65536}
export MALLOC_MMAP_THRESHOLD_

# The flags are separate words on purpose.
# shellcheck disable=SC2086
exec "${OMA_NODE:-node}" ${OMA_NODE_ARGS---max-semi-space-size=2 --heap-growing-percent=30} "$package/dist/bin.js" "$@"
