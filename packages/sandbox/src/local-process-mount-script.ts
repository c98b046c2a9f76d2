import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { type PathMounts } from "./local-process-types.js";
import { mountPointsShortestFirst } from "./local-process-paths.js";

/** Exit code of a mount setup that failed (bad mount point, mount refused, missing cwd). */
export const MOUNT_SETUP_FAILED = 125;

/**
 * Bind-mounts each host directory at its sandbox path inside a fresh mount namespace. Arguments:
 * a fresh empty staging directory, then `target source` pairs shortest target first, then `--`.
 *
 * Every source is first bound below a private tmpfs on the staging directory while nothing is
 * covered yet, and the targets are then bound from there through file descriptor 3. A target that
 * covers a later source or the staging directory itself (`/tmp` over host directories under
 * `/tmp`) thus hides nothing that is still needed. `--no-canonicalize` keeps `mount` from turning
 * `/proc/self/fd/3/N` back into a path that may be covered by then. The staging tmpfs is detached
 * at the end, so the namespace holds only the targets.
 */
const SETUP = [
  'stage=$1; shift',
  'mount -t tmpfs -o mode=0700,size=64k openma-stage "$stage" || exit 125',
  'exec 3<"$stage" || exit 125',
  'index=0; source_next=',
  'for argument do',
  '  [ "$argument" = -- ] && break',
  '  if [ -z "$source_next" ]; then source_next=1; continue; fi',
  '  mkdir "$stage/$index" && mount --bind "$argument" "$stage/$index" || exit 125',
  '  index=$((index + 1)); source_next=',
  'done',
  'index=0',
  'while [ "$1" != -- ]; do',
  '  mkdir -p "$1" && mount --no-canonicalize --bind "/proc/self/fd/3/$index" "$1" || exit 125',
  '  index=$((index + 1)); shift 2',
  'done',
  'shift',
  'umount --no-canonicalize --lazy /proc/self/fd/3 || exit 125',
  'exec 3<&-',
].join("\n");

/** After setup: enter cwd (`$1`) and become the command (`$2…`). */
const RUN_COMMAND = 'cd "$1" || exit 125; shift; exec "$@"';

/** After setup: report readiness and keep the namespace alive until stdin closes. */
const HOLD = "echo ready; read -r _; exit 0";

/** Arguments for `unshare` that set the mounts up and then run the command (one namespace per command). */
export function unshareCommandArgs(stagingDir: string, mounts: PathMounts, cwd: string, command: string, args: readonly string[]): string[] {
  return ["--mount", "--propagation", "private", "/bin/sh", "-c", `${SETUP}\n${RUN_COMMAND}`, "openma-mount", stagingDir, ...mountPairs(mounts), "--", cwd, command, ...args];
}

/** Arguments for `unshare` that set the mounts up, print `ready` and wait for stdin to close. */
export function unshareHolderArgs(stagingDir: string, mounts: PathMounts): string[] {
  return ["--mount", "--propagation", "private", "/bin/sh", "-c", `${SETUP}\n${HOLD}`, "openma-mount-holder", stagingDir, ...mountPairs(mounts), "--"];
}

/**
 * Arguments for `nsenter` that enter the namespace passed as file descriptor 3, close that
 * descriptor so the command does not inherit it, enter cwd and become the command.
 */
export function nsenterCommandArgs(cwd: string, command: string, args: readonly string[]): string[] {
  return ["--mount=/proc/self/fd/3", "--", "/bin/sh", "-c", `exec 3<&-; ${RUN_COMMAND}`, "openma-enter", cwd, command, ...args];
}

function mountPairs(mounts: PathMounts): string[] {
  return mountPointsShortestFirst(mounts).flatMap((mountPoint) => [mountPoint, mounts[mountPoint] as string]);
}

const executables = new Map<string, string | null>();

/**
 * Absolute path of a program on the server's own `PATH` (cached), so a command's environment
 * without the system directories still starts the mapping tools. Null when not found.
 */
export function findExecutable(name: string): string | null {
  const cached = executables.get(name);
  if (cached !== undefined) return cached;
  const directories = (process.env.PATH ?? "").split(delimiter).concat(["/usr/bin", "/bin", "/usr/sbin", "/sbin"]);
  let found: string | null = null;
  for (const directory of directories) {
    if (directory === "") continue;
    try {
      accessSync(join(directory, name), constants.X_OK);
      found = join(directory, name);
      break;
    } catch {
      // Not here; the next directory may have it.
    }
  }
  executables.set(name, found);
  return found;
}
