#!/bin/bash
# Run inside a container: looks for another container's files and for the host's secrets. Prints one
# line per probe, "<name> blocked" or "<name> LEAKED". OMA_PROBE_TREE is the victim container's tree on
# the host; OMA_PROBE_SECRET_B64 holds, base64-encoded (so this script's own environment does not hold
# it), what the victim's workspace or the host's environment holds.
set -u
tree="$OMA_PROBE_TREE"
secret="$(printf '%s' "$OMA_PROBE_SECRET_B64" | base64 -d)"

report() {
  if [ "$2" -eq 0 ]; then echo "$1 LEAKED"; else echo "$1 blocked"; fi
}

# Matches with shell builtins only: a grep given the secret would show it in its own command line.
any_holds() {
  for file in "$@"; do
    content="$(tr '\0' '\n' < "$file" 2>/dev/null)"
    case "$content" in *"$secret"*) return 0 ;; esac
  done
  return 1
}

grep -qsF "$secret" "$tree/workspace/secret.txt"
report tree-path $?
grep -rqsF "$secret" /proc/*/root/workspace /proc/*/root/tmp 2>/dev/null
report proc-root $?
any_holds /proc/[0-9]*/environ
report proc-environ $?
any_holds /proc/[0-9]*/cmdline
report proc-cmdline $?
grep -rqsF "$secret" /tmp /workspace /mnt 2>/dev/null
report disk $?
