# shellcheck shell=sh
# The receiving end of files sent in parts, run before capture.sh and restore.sh (their text follows this).
#
# Parts come as file writes: `part-<i>` (i as six digits from 0), then, once that write has returned,
# `part-<i>.sha256` holding the part's hash, and after the last part `end` holding the number of parts.
# A part is read only once its marker holds 64 hex digits and the part hashes to them: a server may make a
# file full-length before it fills it, so neither a file's size nor its existence says it is complete.
# Exit status 3: a part never matched its hash.

POLL=0.02
# Polls a part that does not match its marker is given before the restore fails.
MISMATCH_POLLS=250

# Writes the parts of $1 to stdout in order, each removed once read.
receive() {
  dir=$1
  i=0
  while :; do
    part=$(printf '%s/part-%06d' "$dir" "$i")
    if [ -e "$part.sha256" ]; then
      want=$(head -c 64 "$part.sha256")
      case $want in
        *[!0-9a-f]* | '') sleep "$POLL"; continue ;;
      esac
      if [ "${#want}" -ne 64 ]; then sleep "$POLL"; continue; fi
      tries=0
      while [ "$(sha256sum < "$part" | cut -c1-64)" != "$want" ]; do
        tries=$((tries + 1))
        if [ "$tries" -ge "$MISMATCH_POLLS" ]; then
          echo "part $i of the restore does not match its sha256" >&2
          exit 3
        fi
        sleep "$POLL"
      done
      cat "$part" || exit 1
      rm -f "$part" "$part.sha256"
      i=$((i + 1))
    elif [ -e "$dir/end" ]; then
      count=$(head -c 32 "$dir/end")
      case $count in
        *[!0-9]* | '') sleep "$POLL"; continue ;;
      esac
      if [ "$count" -eq "$i" ]; then return 0; fi
      if [ "$count" -lt "$i" ]; then
        echo "the restore's end marker counts $count parts, $i were read" >&2
        exit 3
      fi
      sleep "$POLL"
    elif [ ! -d "$dir" ]; then
      # A refused restore removes the folder: stop rather than wait for parts that never come.
      exit 1
    else
      sleep "$POLL"
    fi
  done
}
