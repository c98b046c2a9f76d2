# shellcheck shell=sh
# Hashing shared by capture.sh and restore.sh (their text follows this and receive.sh).

# Hashes the regular files listed in $1 (`./<path>`, NUL-terminated) into $2 as `<path>//h<sha256>`
# records, NUL-terminated and sorted bytewise; work files go beside $2. What sha256sum could not read is
# missing from $2, and its message is on stderr.
hash_files() {
  list=$1 out=$2
  workers=$(nproc 2>/dev/null || echo 2)
  [ "$workers" -le 8 ] 2>/dev/null || workers=8
  # Each hashing process writes a file of its own: parallel writers to one pipe could split a record.
  # Batches are large because starting a process per few hundred files cost more than hashing them.
  # shellcheck disable=SC2016 # the inner script expands its own arguments
  xargs -0 -r -P "$workers" -n 4096 sh -c 'exec sha256sum -z "$@" > "$0.$$"' "$out.sums" < "$list"
  set -- "$out".sums.*
  [ -e "$1" ] || set --
  cat /dev/null "$@" > "$out.all" || return 1
  # `<sha256>  ./<path>` becomes `<path>//h<sha256>` by columns, as sed's back-references are slow.
  cut -z -c 69- "$out.all" | sed -z 's|$|//h|' > "$out.paths" || return 1
  cut -z -c 1-64 "$out.all" | paste -z -d '\0' "$out.paths" - |
    sort -z -S 64M -T "${out%/*}" > "$out" || return 1
  rm -f "$out".sums.* "$out.all" "$out.paths"
}
