#!/bin/sh
# Starts workerd with a named environment instead of the whole environment of the process that launched
# the local bridge (which may hold an environment key or an API key). Miniflare runs this file as its
# workerd (MINIFLARE_WORKERD_PATH); OMA_WORKERD_BINARY names the real binary.
set -eu
binary="${OMA_WORKERD_BINARY:?OMA_WORKERD_BINARY must name the workerd binary}"
exec /usr/bin/env -i \
  PATH="${PATH:-/usr/bin:/bin}" \
  HOME="${HOME:-/}" \
  TMPDIR="${TMPDIR:-/tmp}" \
  LANG="${LANG:-C.UTF-8}" \
  FORCE_COLOR="${FORCE_COLOR:-0}" \
  ${TZ:+"TZ=$TZ"} \
  ${SSL_CERT_FILE:+"SSL_CERT_FILE=$SSL_CERT_FILE"} \
  ${SSL_CERT_DIR:+"SSL_CERT_DIR=$SSL_CERT_DIR"} \
  "$binary" "$@"
