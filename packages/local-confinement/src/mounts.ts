import { accessSync, constants, mkdtempSync, rmdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, delimiter, join } from "node:path";
import { mountPointsShortestFirst } from "./paths.js";
import type { PathMounts } from "./types.js";
import STAGED_SETUP from "./scripts/staged-mounts.sh";

/** Descriptors 3–9 are all a POSIX shell can name; larger tables go through a staging directory. */
const MAX_DIRECT_MOUNTS = 7;
const FIRST_SOURCE_FD = 3;

/**
 * Shell code that bind-mounts each host directory at its sandbox path inside a fresh mount
 * namespace, its arguments, and what to remove once the setup's process ended. The script consumes
 * its arguments, so `$@` then holds whatever followed them.
 *
 * Every source is opened (or, for large tables, bound below a private staging tmpfs) before the
 * first target is mounted, and each target is then bound from `/proc/self/fd/N`. A target that
 * covers a later source (`/tmp` over host directories under `/tmp`) thus hides nothing still
 * needed. `--no-canonicalize` keeps `mount` from turning `/proc/self/fd/N` back into a path that
 * may be covered by then.
 */
export interface MountSetup {
  readonly script: string;
  readonly args: readonly string[];
  /** Removes what a setup that failed or was killed left on the host; a no-op otherwise. */
  cleanup(): void;
}

/** Builds the {@link MountSetup} for a normalized table. */
export function createMountSetup(mounts: PathMounts): MountSetup {
  const pairs = mountPointsShortestFirst(mounts).map(
    (mountPoint) => [mountPoint, mounts[mountPoint] as string] as const,
  );
  return pairs.length <= MAX_DIRECT_MOUNTS ? directSetup(pairs) : stagedSetup(pairs);
}

function directSetup(pairs: readonly (readonly [string, string])[]): MountSetup {
  const argument = (position: number): string => `"\${${position}}"`;
  const descriptors = pairs.map((_, index) => FIRST_SOURCE_FD + index);
  const lines = [
    ...(pairs.length === 0
      ? []
      : [
          `command exec ${descriptors.map((fd, index) => `${fd}<${argument(index * 2 + 2)}`).join(" ")} || exit 125`,
        ]),
    ...descriptors.map(
      (fd, index) =>
        `mkdir -p ${argument(index * 2 + 1)} && mount --no-canonicalize --bind /proc/self/fd/${fd} ${argument(index * 2 + 1)} || exit 125`,
    ),
    ...(pairs.length === 0 ? [] : [`exec ${descriptors.map((fd) => `${fd}<&-`).join(" ")}`]),
    `shift ${pairs.length * 2 + 1}`,
  ];
  return { script: lines.join("\n"), args: [...pairs.flat(), "--"], cleanup: () => undefined };
}

/** The staging variant (`scripts/staged-mounts.sh`): for tables past {@link MAX_DIRECT_MOUNTS}. */
function stagedSetup(pairs: readonly (readonly [string, string])[]): MountSetup {
  const staging = createStagingDirectory();
  return {
    script: STAGED_SETUP,
    args: [staging.parent, staging.name, ...pairs.flat(), "--"],
    cleanup: staging.remove,
  };
}

/** After setup: enter cwd (`$1`) and become the command (`$2…`). */
const RUN_COMMAND = 'cd "$1" || exit 125; shift; exec "$@"';

/** After setup: report readiness and keep the namespace alive until stdin closes. */
const HOLD = "echo ready; read -r _; exit 0";

const UNSHARE = ["--mount", "--propagation", "private", "/bin/sh", "-c"];

/** Arguments for `unshare` that set the mounts up and then run the command (one namespace per command). */
export function unshareCommandArgs(
  setup: MountSetup,
  cwd: string,
  command: string,
  args: readonly string[],
): string[] {
  return [
    ...UNSHARE,
    `${setup.script}\n${RUN_COMMAND}`,
    "openma-mount",
    ...setup.args,
    cwd,
    command,
    ...args,
  ];
}

/** Arguments for `unshare` that set the mounts up, print `ready` and wait for stdin to close. */
export function unshareHolderArgs(setup: MountSetup): string[] {
  return [...UNSHARE, `${setup.script}\n${HOLD}`, "openma-mount-holder", ...setup.args];
}

/**
 * Arguments for `nsenter` that enter the namespace passed as file descriptor 3, close that
 * descriptor so the command does not inherit it, enter cwd and become the command.
 */
export function nsenterCommandArgs(
  cwd: string,
  command: string,
  args: readonly string[],
): string[] {
  return [
    "--mount=/proc/self/fd/3",
    "--",
    "/bin/sh",
    "-c",
    `exec 3<&-; ${RUN_COMMAND}`,
    "openma-enter",
    cwd,
    command,
    ...args,
  ];
}

/** A fresh empty host directory for one mount setup, which removes it when done. */
export interface StagingDirectory {
  readonly parent: string;
  readonly name: string;
  /** Removes the directory if the setup did not get to it (it failed or was killed). */
  remove(): void;
}

/** Creates a {@link StagingDirectory} under the system's temporary directory. */
function createStagingDirectory(): StagingDirectory {
  const parent = tmpdir();
  const path = mkdtempSync(join(parent, "openma-mount-stage-"));
  return {
    parent,
    name: basename(path),
    remove() {
      try {
        rmdirSync(path);
      } catch {
        // Removed by the setup already, the usual case.
      }
    },
  };
}

const executables = new Map<string, string | null>();

/**
 * Absolute path of a program on the server's own `PATH` (cached), so a command's environment
 * without the system directories still starts the mapping tools. Null when not found.
 */
export function findExecutable(name: string): string | null {
  const cached = executables.get(name);
  if (cached !== undefined) return cached;
  const directories = (process.env.PATH ?? "")
    .split(delimiter)
    .concat(["/usr/bin", "/bin", "/usr/sbin", "/sbin"]);
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
