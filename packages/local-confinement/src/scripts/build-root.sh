#!/bin/sh
# Builds a container's copy-on-write root, then becomes bubblewrap (see bubblewrap-args.ts).
#
#   build-root.sh <tree> <overlay name...> -- <symlink name> <target> ... -- <bubblewrap command...>
#
# Run as root in a private mount namespace (`unshare --mount`): one overlayfs per system directory inside
# the container's tree, the merged-/usr symlinks and the container's own mount points. Overlay paths are
# relative to the tree (the script enters it first), so a tree path with `,` or `:` cannot break the mount
# options. The overlays exist only in that namespace and bubblewrap's, never in the host's mount table,
# and vanish with the container. Exit status 125: the root could not be built.
cd "$1" || exit 125
shift
mkdir -p rootfs upper work || exit 125
while [ "$1" != -- ]; do
  mkdir -p "upper/$1" "work/$1" "rootfs/$1" || exit 125
  mount -t overlay openma-root -o "lowerdir=/$1,upperdir=upper/$1,workdir=work/$1" "rootfs/$1" || exit 125
  shift
done
shift
while [ "$1" != -- ]; do
  ln -sfn "$2" "rootfs/$1" || exit 125
  shift 2
done
shift
mkdir -p rootfs/proc rootfs/dev rootfs/root rootfs/home rootfs/mnt rootfs/run rootfs/srv rootfs/tmp \
  private/var/tmp || exit 125
chmod 1777 rootfs/tmp private/var/tmp || exit 125
# The container's root holds no capability and maps only uid 0, so directories of other users are closed
# to it. apt downloads as `_apt` into such directories; the container's copies become root's and apt is
# told to stay root (copy-on-write: the host's files keep their owners).
for d in var/cache/apt/archives/partial var/lib/apt/lists/partial var/lib/apt/lists/auxfiles; do
  if [ -d "rootfs/$d" ]; then chown root:root "rootfs/$d"; fi
done
if [ -d rootfs/etc/apt/apt.conf.d ]; then
  echo 'APT::Sandbox::User "root";' > rootfs/etc/apt/apt.conf.d/00openma-sandbox-user
fi
exec "$@"
