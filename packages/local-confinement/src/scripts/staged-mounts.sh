#!/bin/sh
# Bind-mounts each host directory at its sandbox path inside a fresh mount namespace, for tables too large
# for descriptors 3-9 (see mounts.ts). The caller appends what runs next, which finds in "$@" whatever
# followed the table.
#
#   staged-mounts.sh <staging parent> <staging name> <mount point> <host directory> ... -- <rest...>
#
# Every source is bound below a private tmpfs on a fresh staging directory (reached through descriptor 3)
# before the first target is mounted, so a target that covers a later source (`/tmp` over host directories
# under `/tmp`) hides nothing still needed; the targets are bound from there, then the tmpfs is detached
# and the directory removed through descriptor 4, its parent, opened before anything was covered.
# `--no-canonicalize` keeps `mount` from turning `/proc/self/fd/N` back into a path that may be covered.
# Exit status 125: a mount failed.
command exec 4<"$1" || exit 125
stage=$1/$2
stage_name=$2
shift 2
mount -t tmpfs -o mode=0700,size=64k openma-stage "$stage" || exit 125
command exec 3<"$stage" || exit 125
index=0
source_next=
for argument do
  [ "$argument" = -- ] && break
  if [ -z "$source_next" ]; then source_next=1; continue; fi
  mkdir "$stage/$index" && mount --bind "$argument" "$stage/$index" || exit 125
  index=$((index + 1))
  source_next=
done
index=0
while [ "$1" != -- ]; do
  mkdir -p "$1" && mount --no-canonicalize --bind "/proc/self/fd/3/$index" "$1" || exit 125
  index=$((index + 1))
  shift 2
done
shift
umount --no-canonicalize --lazy /proc/self/fd/3 || exit 125
exec 3<&-
rmdir "/proc/self/fd/4/$stage_name" || exit 125
exec 4<&-
