#!/bin/sh
# Writes the base64 text $3, decoded, to the file $2 inside a duplex process's stdin folder $1: under a
# temporary name first, then renamed, so the reader never sees half a file. The process may end and remove
# its folder at any moment; a write that loses that race is not a failure.
[ -d "$1" ] || exit 0
{ printf '%s' "$3" | base64 -d >"$2.part" && mv "$2.part" "$2"; } || [ ! -d "$1" ]
