#!/bin/sh
# Ends the harness processes of one runtime whose host is gone: every process whose environment carries
# OMA_HARNESS_RUNTIME=<runtime id> (the harness started by the driver) and every descendant of one (the
# commands it ran). All of them are stopped first, so none forks or is reparented away while the tree is
# read, then killed; this repeats until none is left. Nothing else in the runtime is touched.
#
# Usage: end-harness.sh <runtime id>
# Exit status: 0 once none is left (or there was none), 3 when some survived every round.
set -u

marker="OMA_HARNESS_RUNTIME=$1"
self=$$

# Pids of live, non-zombie processes carrying the marker, one a line.
marked() {
  for dir in /proc/[0-9]*; do
    pid=${dir#/proc/}
    [ "$pid" = "$self" ] && continue
    [ -r "$dir/environ" ] || continue
    if tr '\0' '\n' < "$dir/environ" 2>/dev/null | grep -qxF "$marker"; then
      echo "$pid"
    fi
  done
}

# "pid ppid" of every live, non-zombie process, one a line. The command name in /proc/<pid>/stat may hold
# spaces and parentheses, so the fields are read after its last ')'.
parents() {
  for dir in /proc/[0-9]*; do
    stat=$(cat "$dir/stat" 2>/dev/null) || continue
    rest=${stat##*) }
    # shellcheck disable=SC2086 # the fields after the name are single words
    set -- $rest
    [ "$1" = "Z" ] && continue
    echo "${dir#/proc/} $2"
  done
}

# The marked processes and all their descendants, one pid a line.
tree() {
  found=$(marked)
  [ -n "$found" ] || return 0
  table=$(parents)
  while :; do
    more=$(printf '%s\n' "$table" | awk -v found="$found" '
      BEGIN { n = split(found, list, "\n"); for (i = 1; i <= n; i++) if (list[i] != "") seen[list[i]] = 1 }
      ($2 in seen) && !($1 in seen) { print $1 }')
    [ -n "$more" ] || break
    found=$(printf '%s\n%s\n' "$found" "$more")
  done
  printf '%s\n' "$found" | grep -v "^$self\$" | sort -u
}

round=0
while [ "$round" -lt 20 ]; do
  pids=$(tree)
  if [ -z "$pids" ]; then
    exit 0
  fi
  # shellcheck disable=SC2086 # one pid a word
  kill -STOP $pids 2>/dev/null
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null
  round=$((round + 1))
  sleep 0.2 2>/dev/null || sleep 1
done
echo "harness processes still running after $round rounds: $(tree | tr '\n' ' ')" >&2
exit 3
