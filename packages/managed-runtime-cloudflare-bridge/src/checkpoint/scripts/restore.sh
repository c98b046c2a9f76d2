#!/bin/sh
# The sandbox's side of a restore sent in parts (see restore-send.ts).
#
#   restore.sh extract <parts> <zstd|gzip|none> <errors>
#     Extracts the archive arriving in <parts> into /workspace, tar's complaints into <errors>.
#   restore.sh verify <parts> <scratch> <after> <find prune expression...>
#     Compares /workspace (minus what the expression prunes) with the listing arriving in <parts>, then runs
#     the shell command <after> (when not empty; its failure is ignored).
#   restore.sh restore <parts> <codec> <errors> <listing parts> <scratch> <after> <find prune expression...>
#     extract, then verify: the whole restore in one exec.
#
# Parts come as file PUTs: `part-<i>` (i as six digits from 0), then, once that PUT has returned,
# `part-<i>.sha256` holding the part's hash, and after the last part `end` holding the number of parts.
# A part is read only once its marker holds 64 hex digits and the part hashes to them: a server may make a
# file full-length before it fills it (Cloudflare's does), so neither a file's size nor its existence says
# it is complete. Exit status 3: a part never matched its hash; 4: the tree differs from the listing (the
# first differing record on stdout). Both mean `integrity_failed` to the driver.
set -u

POLL=0.02
# Polls a part that does not match its marker is given (5 s) before the restore fails.
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

extract() {
  dir=$1 codec=$2 errors=$3
  status="$errors.receive"
  case $codec in
    zstd) decode() { zstd -d -c -q; } ;;
    gzip) decode() { gzip -d -c; } ;;
    *) decode() { cat; } ;;
  esac
  # The receive loop's own status: a loop that stopped early can leave tar a stream that ends cleanly.
  # (receive runs in a subshell of its own: its exit ends only it.)
  # Parents the archive does not hold are made 0755, as the listing expects them.
  umask 022
  { (receive "$dir"); echo "$?" > "$status"; } | decode | tar -xf - -C /workspace 2> "$errors"
  extracted=$?
  received=$(cat "$status" 2>/dev/null || echo 1)
  rm -f "$status"
  if [ "$received" = 3 ]; then exit 3; fi
  if [ "$extracted" -ne 0 ]; then
    head -c 4096 "$errors" >&2
    rm -f "$errors"
    exit 1
  fi
  rm -f "$errors"
  if [ "$received" != 0 ]; then exit 1; fi
  rm -rf "$dir"
}

# Records compared, NUL-terminated, sorted bytewise: `<path>//e<type> <mode> <size> <target>` for every
# entry (size 0 but for files, mode `-` and the target for symlinks) and `<path>//h<sha256>` for every file.
verify() {
  dir=$1 scratch=$2 after=$3
  shift 3
  mkdir -p "$scratch" || exit 1
  receive "$dir" > "$scratch/expected.raw"
  rm -rf "$dir"
  cd /workspace || exit 1
  find . -mindepth 1 \( "$@" \) -prune -o \( \
    \( -type f -printf '%P//ef %m %s \0' -fprint0 "$scratch/files" \) -o \
    \( -type d -printf '%P//ed %m 0 \0' \) -o \
    \( -type l -printf '%P//el - 0 %l\0' \) -o \
    -printf '%P//e%y %m 0 \0' \) > "$scratch/entries" || exit 1
  workers=$(nproc 2>/dev/null || echo 2)
  [ "$workers" -le 8 ] 2>/dev/null || workers=8
  # Each hashing process writes a file of its own: parallel writers to one pipe could split a record.
  touch "$scratch/files"
  # shellcheck disable=SC2016 # the inner script expands its own arguments
  xargs -0 -r -P "$workers" -n 256 sh -c 'exec sha256sum -z "$@" > "$0.$$"' "$scratch/hashes" < "$scratch/files"
  {
    cat "$scratch/entries"
    for hashes in "$scratch"/hashes.*; do
      [ -e "$hashes" ] || continue
      sed -z 's|^\([0-9a-f]\{64\}\)  \./\(.*\)$|\2//h\1|' "$hashes"
    done
  } | LC_ALL=C sort -z -S 64M -T "$scratch" > "$scratch/actual"
  LC_ALL=C sort -z -S 64M -T "$scratch" "$scratch/expected.raw" > "$scratch/expected"
  if cmp -s "$scratch/expected" "$scratch/actual"; then
    rm -rf "$scratch"
    if [ -n "$after" ]; then (sh -c "$after") > /dev/null 2>&1; fi
    return 0
  fi
  # The first record in either listing and not the other (the sandbox's own with a leading tab).
  LC_ALL=C comm -z -3 "$scratch/expected" "$scratch/actual" | head -z -n 1 | tr '\0' '\n'
  rm -rf "$scratch"
  exit 4
}

mode=$1
shift
case $mode in
  extract) extract "$@" ;;
  verify) verify "$@" ;;
  restore)
    (extract "$1" "$2" "$3") || exit $?
    shift 3
    verify "$@"
    ;;
  *) echo "restore.sh: unknown mode $mode" >&2; exit 2 ;;
esac
