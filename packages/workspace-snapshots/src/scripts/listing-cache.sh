# shellcheck shell=sh
# The sandbox's listing cache, shared by capture.sh and restore.sh (their text follows this); capture.sh
# describes a listing record.

# Sets LINKED_RECORD and RECORD: the find(1) formats of a listing record for a file with more than one link
# (its token $1 makes it count as changed every time) and for any other entry.
record_formats() {
  # shellcheck disable=SC2034 # read by the scripts that follow
  LINKED_RECORD="%P//ef %m %s %b %T@ %C@ %i %n $1 \\0"
  # shellcheck disable=SC2034 # read by the scripts that follow
  RECORD='%P//e%y %m %s %b %T@ %C@ %i %n - %l\0'
}

# Makes the sorted listing $2 the cache $1 of snapshot $3.
commit_cache() {
  cache=$1 listing=$2 snapshot=$3
  mkdir -p "$cache" || return 1
  # The snapshot file goes last: a cache whose move was cut short names no snapshot.
  rm -f "$cache/snapshot"
  mv "$listing" "$cache/listing" || return 1
  printf '%s' "$snapshot" > "$cache/snapshot.new" && mv "$cache/snapshot.new" "$cache/snapshot"
}
