#!/bin/sh
# Gives a background process a real stdin: numbered chunk files appear in the folder $1, and a reader
# feeds them in order through a FIFO into the command ($2 and on). `eof` holds how many chunks were written
# before stdin closed; the reader ends after that many, which closes the command's stdin. The folder is
# removed when the command ends, so later writes find nothing to write into.
D=$1
shift
mkdir -p "$D" && mkfifo "$D/in" || exit 125
(
  i=0
  n=0
  while :; do
    if [ -f "$D/$i" ]; then
      cat "$D/$i" || exit 0
      rm -f "$D/$i"
      i=$((i + 1))
      n=0
    elif [ -f "$D/eof" ] && [ "$i" -ge "$(cat "$D/eof")" ]; then
      exit 0
    elif [ "$n" -lt 20 ]; then
      n=$((n + 1))
      sleep 0.05
    else
      sleep 0.25
    fi
  done
) >"$D/in" &
reader=$!
"$@" <"$D/in" &
child=$!
trap 'kill -TERM "$child" 2>/dev/null' TERM INT
wait "$child"
status=$?
while kill -0 "$child" 2>/dev/null; do
  wait "$child"
  status=$?
done
kill "$reader" 2>/dev/null
rm -rf "$D"
exit "$status"
