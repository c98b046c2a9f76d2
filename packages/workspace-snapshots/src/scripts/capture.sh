#!/bin/sh
# The sandbox's side of a checkpoint (see capture.ts). Every path argument is absolute; <prune...> is a find(1)
# expression matching what the workspace excludes (`-false` for nothing).
#
#   capture.sh list <workspace> <cache> <scratch> <pass> <parent> <prune...>
#     Lists the workspace into <scratch>/listing and writes <scratch>/changes: against the cache's listing when
#     the cache belongs to snapshot <parent> (or to any snapshot, when <parent> is `cached`), else against
#     nothing. Prints `base <id or ->`, `entries <n>`, `changed <n>` (entries new or changed) and,
#     when a changed file could not be read, `unreadable <first error line>`; `zstd yes` when zstd is here.
#   capture.sh bundle <workspace> <scratch> <zstd|gzip|none>
#     Archives the paths arriving in <scratch>/need-parts (`./<path>`, NUL-terminated, in order; as receive.sh
#     describes) into <scratch>/bundle.
#   capture.sh commit <cache> <scratch> <snapshot>
#     Makes <scratch>/listing the cache of <snapshot>, then removes <scratch>.
#   capture.sh clean <scratch>
#
# A listing record is `<path>//e<type> <mode> <size> <blocks> <mtime> <ctime> <inode> <links> <token> <target>`,
# NUL-terminated and sorted bytewise; a path never holds `//`, so each path's records are contiguous and a
# folder's records come right after its own. <token> is `-`, or <pass> for a file with more than one link, so
# such a file always counts as changed. <changes> merges, in that order, the new records (`//e`), the sha256
# of each new regular file (`<path>//h<hex>`) and the paths whose old record is gone (`<path>//r`).
set -u
# Bytewise everywhere: sorting, comparing, and sed on names that need not be UTF-8 (it is also far faster).
export LC_ALL=C

listing() {
  ws=$1 out=$2 pass=$3
  shift 3
  record_formats "$pass"
  cd "$ws" || exit 1
  find . -mindepth 1 \( "$@" \) -prune -o \( \
    \( -type f -links +1 -printf "$LINKED_RECORD" \) -o -printf "$RECORD" \) > "$out.raw" 2> "$out.errors"
  listed=$?
  if [ "$listed" -ne 0 ]; then
    printf 'unreadable '
    head -n 1 "$out.errors" | head -c 1024
    exit 5
  fi
  sort -z -S 64M -T "${out%/*}" "$out.raw" > "$out" || exit 1
  rm -f "$out.raw" "$out.errors"
}

list() {
  ws=$1 cache=$2 scratch=$3 pass=$4 parent=$5
  shift 5
  rm -rf "$scratch"
  mkdir -p "$scratch/need-parts" || exit 1
  listing "$ws" "$scratch/listing" "$pass" "$@"
  old=/dev/null
  base=-
  cached=$(head -c 128 "$cache/snapshot" 2>/dev/null) || cached=
  if [ "$parent" != - ] && [ -n "$cached" ] && [ -f "$cache/listing" ]; then
    if [ "$parent" = cached ] || [ "$cached" = "$parent" ]; then
      old=$cache/listing
      base=$cached
    fi
  fi
  comm -z -13 "$old" "$scratch/listing" > "$scratch/added" || exit 1
  comm -z -23 "$old" "$scratch/listing" | sed -z 's|//e.*$|//r|' > "$scratch/removed" || exit 1
  # The first `//` ends the path, which is a run of non-slashes and single slashes.
  sed -z -n '\#^[^/]*\(/[^/]\{1,\}\)*//ef #{s#//ef .*$##;s#^#./#p}' "$scratch/added" \
    > "$scratch/files" || exit 1
  hash_files "$scratch/files" "$scratch/hashes" 2> "$scratch/hash-errors" || exit 1
  sort -z -m "$scratch/added" "$scratch/hashes" "$scratch/removed" > "$scratch/changes" || exit 1
  changed=$(tr -cd '\0' < "$scratch/added" | wc -c)
  rm -f "$scratch/added" "$scratch/removed" "$scratch/files" "$scratch/hashes"
  echo "base $base"
  if command -v zstd > /dev/null 2>&1; then echo "zstd yes"; fi
  echo "entries $(tr -cd '\0' < "$scratch/listing" | wc -c)"
  echo "changed $changed"
  if [ -s "$scratch/hash-errors" ]; then
    printf 'unreadable '
    head -n 1 "$scratch/hash-errors" | head -c 1024
    echo
  fi
}

bundle() {
  ws=$1 scratch=$2 codec=$3
  (receive "$scratch/need-parts") > "$scratch/need" || exit $?
  cd "$ws" || exit 1
  case $codec in
    zstd) encode() { zstd -1 -q -c; } ;;
    gzip) encode() { gzip -1 -c; } ;;
    *) encode() { cat; } ;;
  esac
  # Links are read as the files they name: each content travels once, as the file the list names.
  { tar --null --no-recursion --hard-dereference -T "$scratch/need" -cf - 2> "$scratch/tar-errors"
    echo "$?" > "$scratch/tar-status"; } | encode > "$scratch/bundle"
  if [ "$(cat "$scratch/tar-status")" != 0 ]; then
    printf 'unreadable '
    head -n 1 "$scratch/tar-errors" | head -c 1024
    exit 5
  fi
}

commit() {
  cache=$1 scratch=$2 snapshot=$3
  commit_cache "$cache" "$scratch/listing" "$snapshot" || exit 1
  rm -rf "$scratch"
}

mode=$1
shift
case $mode in
  list) list "$@" ;;
  bundle) bundle "$@" ;;
  commit) commit "$@" ;;
  clean) rm -rf "$1" ;;
  *) echo "capture.sh: unknown mode $mode" >&2; exit 2 ;;
esac
