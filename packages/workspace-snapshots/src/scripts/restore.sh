#!/bin/sh
# The sandbox's side of a restore (see restore.ts). Every path argument is absolute.
#
#   restore.sh prepare <scratch>
#     Makes the folders the parts arrive in: <scratch>/archive and <scratch>/listing. Prints `zstd yes` when
#     zstd is here.
#   restore.sh restore <workspace> <scratch> <zstd|gzip|none> <cache> <pass> <snapshot> <prune...>
#     Extracts the archive arriving in <scratch>/archive into <workspace>, then compares <workspace> (minus
#     what the find(1) expression <prune...> prunes) with the listing arriving in <scratch>/listing. The tree
#     it proved becomes the listing cache <cache> of <snapshot> (as capture.sh lists, <pass> its token).
#
# Parts arrive as receive.sh describes.
# Exit status 3: a part never matched its hash; 4: the tree differs from the listing (the first differing
# record on stdout). Both mean `integrity_failed`.
set -u
# Bytewise everywhere: sorting, comparing, and sed on names that need not be UTF-8 (it is also far faster).
export LC_ALL=C

extract() {
  ws=$1 scratch=$2 codec=$3
  status="$scratch/receive-status"
  errors="$scratch/tar-errors"
  case $codec in
    zstd) decode() { zstd -d -c -q; } ;;
    gzip) decode() { gzip -d -c; } ;;
    *) decode() { cat; } ;;
  esac
  # The receive loop's own status: a loop that stopped early can leave tar a stream that ends cleanly.
  # Parents the archive does not hold are made 0755, as the listing expects them.
  umask 022
  { (receive "$scratch/archive"); echo "$?" > "$status"; } | decode | tar -xpf - -C "$ws" 2> "$errors"
  extracted=$?
  received=$(cat "$status" 2>/dev/null || echo 1)
  if [ "$received" = 3 ]; then exit 3; fi
  if [ "$extracted" -ne 0 ]; then
    head -c 4096 "$errors" >&2
    exit 1
  fi
  if [ "$received" != 0 ]; then exit 1; fi
}

# Records compared, NUL-terminated, sorted bytewise: `<path>//e<type> <mode> <size> <mtime> <links> <target>`
# for every entry (size 0 but for files, links 1 but for files, mode `-` for symlinks) and `<path>//h<sha256>`
# for every file.
# The same pass of find(1) writes the capture's listing records of the tree (<scratch>/cache.raw).
verify() {
  ws=$1 scratch=$2 cache=$3 pass=$4 snapshot=$5
  shift 5
  receive "$scratch/listing" > "$scratch/expected.raw"
  record_formats "$pass"
  cached=$scratch/cache.raw
  cd "$ws" || exit 1
  find . -mindepth 1 \( "$@" \) -prune -o \( \
    \( \( -type f -links +1 -fprintf "$cached" "$LINKED_RECORD" \) -o -fprintf "$cached" "$RECORD" \) , \
    \( \( -type f -printf '%P//ef %m %s %T@ %n \0' -fprint0 "$scratch/files" \) -o \
    \( -type d -printf '%P//ed %m 0 %T@ 1 \0' \) -o \
    \( -type l -printf '%P//el - 0 %T@ 1 %l\0' \) -o \
    -printf '%P//e%y %m 0 %T@ 1 \0' \) \) > "$scratch/entries" || exit 1
  touch "$scratch/files"
  hash_files "$scratch/files" "$scratch/hashes" || exit 1
  sort -z -S 64M -T "$scratch" "$scratch/entries" "$scratch/hashes" > "$scratch/actual" || exit 1
  sort -z -S 64M -T "$scratch" "$scratch/expected.raw" > "$scratch/expected"
  if cmp -s "$scratch/expected" "$scratch/actual"; then
    # Best effort: a cache that is not made costs the next checkpoint a full pass.
    sort -z -S 64M -T "$scratch" "$cached" > "$scratch/cache" &&
      commit_cache "$cache" "$scratch/cache" "$snapshot"
    rm -rf "$scratch"
    return 0
  fi
  # The first record in either listing and not the other (the sandbox's own with a leading tab).
  comm -z -3 "$scratch/expected" "$scratch/actual" | head -z -n 1 | tr '\0' '\n'
  rm -rf "$scratch"
  exit 4
}

mode=$1
shift
case $mode in
  prepare)
    mkdir -p "$1/archive" "$1/listing" || exit 1
    if command -v zstd > /dev/null 2>&1; then echo "zstd yes"; fi
    ;;
  restore)
    ws=$1 scratch=$2 codec=$3
    shift 3
    (extract "$ws" "$scratch" "$codec") || { status=$?; rm -rf "$scratch"; exit "$status"; }
    verify "$ws" "$scratch" "$@"
    ;;
  *) echo "restore.sh: unknown mode $mode" >&2; exit 2 ;;
esac
