#!/bin/sh
# Moves itself into every cgroup whose `cgroup.procs` is named before `--`, then becomes the command after
# it, so every descendant is counted from its first instruction (see cgroups.ts).
#
#   join-cgroups.sh <cgroup.procs...> -- <command...>
#
# Exit status 125: a cgroup refused the process.
while [ "$1" != -- ]; do
  echo $$ > "$1" || exit 125
  shift
done
shift
exec "$@"
