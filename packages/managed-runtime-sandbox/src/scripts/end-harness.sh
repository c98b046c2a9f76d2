#!/bin/sh
# Ends the harness processes of one runtime whose host is gone: every process whose environment carries
# OMA_HARNESS_RUNTIME=<runtime id> (the harness started by the driver) and every descendant of one (the
# commands it ran). All of them are stopped first, so none forks or is reparented away while the tree is
# read, then killed; this repeats until none is left. Nothing else in the runtime is touched.
#
# A process whose parent is 0 was entered from outside the runtime, and that parent (nsenter) copies a
# stop of its child onto itself: stopped, it would never reap the child, so it is killed, never stopped.
# Success is verified: the tree must be empty on two scans a settle apart, and every such entered process
# must be reaped by its parent, so the one who started the harness sees it end.
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

# The parent pid of a live process, empty when it is gone.
parent_of() {
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  rest=${stat##*) }
  # shellcheck disable=SC2086 # the fields after the name are single words
  set -- $rest
  echo "$2"
}

# Whether every entered process that was killed is gone (reaped) from /proc.
reaped() {
  for pid in $entered; do
    [ -e "/proc/$pid" ] && return 1
  done
  return 0
}

entered=""
round=0
empty=0
while [ "$round" -lt 20 ]; do
  pids=$(tree)
  if [ -z "$pids" ]; then
    empty=$((empty + 1))
    # Done once two scans a settle apart find none and the entering parents reaped what was killed.
    if [ "$empty" -ge 2 ] && reaped; then
      exit 0
    fi
  else
    empty=0
    stoppable=""
    for pid in $pids; do
      if [ "$(parent_of "$pid")" = "0" ]; then
        entered="$entered $pid"
      else
        stoppable="$stoppable $pid"
      fi
    done
    # shellcheck disable=SC2086 # one pid a word
    [ -z "$stoppable" ] || kill -STOP $stoppable 2>/dev/null
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null
  fi
  round=$((round + 1))
  sleep 0.2 2>/dev/null || sleep 1
done
echo "harness processes still running after $round rounds: $(tree | tr '\n' ' ')" \
  "(not reaped:$(for pid in $entered; do [ -e "/proc/$pid" ] && printf ' %s' "$pid"; done))" >&2
exit 3
