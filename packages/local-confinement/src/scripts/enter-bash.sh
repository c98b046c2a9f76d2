#!/bin/bash
# After `nsenter` joined a container: closes every descriptor but stdin, stdout and stderr (the namespace
# handles, and any the server itself inherited without close-on-exec), enters the working directory and
# becomes the command (see bubblewrap-args.ts). Bash names any descriptor; enter-sh.sh is the fallback.
#
#   enter-bash.sh <cwd> <command...>
for fd in /proc/self/fd/*; do
  fd=${fd##*/}
  case $fd in
    0 | 1 | 2) ;;
    *) eval "exec $fd>&-" ;;
  esac
done
cd "$1" || exit 125
shift
exec "$@"
