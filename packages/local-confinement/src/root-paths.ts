import { type Stats, lstatSync, readlinkSync } from "node:fs";
import { posix } from "node:path";
import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";

/** Symlinks followed in one resolution before it fails, as the kernel's `ELOOP` limit. */
const MAX_SYMLINKS = 40;

/** Options of {@link resolveInRoot}. */
export interface ResolveInRootOptions {
  /** Follow a symlink in the last component (read, write, stat) or act on the link itself (delete, rename, lstat). */
  readonly followFinal: boolean;
}

/**
 * Resolves an absolute, normalized container path to a container path with no symlink in it (but maybe
 * the last component when `followFinal` is false), following every symlink the way the kernel would for
 * a process whose root is the container's: an absolute target restarts at the container's root, `..`
 * never climbs above it. `toHost` maps a symlink-free container path to the host path that backs it.
 * Components that do not exist end the walk: they cannot be symlinks.
 *
 * This is `openat2(RESOLVE_IN_ROOT)` done one `lstat` at a time, not atomically: a process inside the
 * container that swaps a checked directory for a symlink between the walk and the operation redirects
 * the operation, and the kernel then resolves that link against the caller's root (see
 * docs/local-stack.md, Isolation).
 */
export function resolveInRoot(
  path: string,
  toHost: (containerPath: string) => string,
  options: ResolveInRootOptions,
): string {
  let pending = path.split("/").filter((part) => part !== "");
  let resolved = "/";
  let followed = 0;
  while (pending.length > 0) {
    const [name, ...rest] = pending as [string, ...string[]];
    const candidate = posix.join(resolved, name);
    if (rest.length === 0 && !options.followFinal) return candidate;
    const info = lstatOrUndefined(toHost(candidate));
    if (info === undefined) return posix.join(candidate, ...rest);
    if (!info.isSymbolicLink()) {
      resolved = candidate;
      pending = rest;
      continue;
    }
    followed += 1;
    if (followed > MAX_SYMLINKS) {
      throw new InvalidRequestError({
        message: `too many levels of symbolic links: ${path}`,
        context: { path, errno: "ELOOP" },
      });
    }
    const target = readlinkSync(toHost(candidate));
    const base = posix.resolve("/", target.startsWith("/") ? target : posix.join(resolved, target));
    pending = [...base.split("/").filter((part) => part !== ""), ...rest];
    resolved = "/";
  }
  return resolved;
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}
