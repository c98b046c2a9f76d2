import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, statSync, writeFileSync } from "node:fs";

/** A pids cgroup holding every process of one container; `pids.max` bounds them all together. */
export interface PidsCgroup {
  /** The cgroup's `cgroup.procs`; a process writes its pid there to join. */
  readonly procsFile: string;
  /** Removes the cgroup once its last processes are gone (retried for a few seconds while they exit). */
  remove(): Promise<void>;
}

/**
 * Shell code that moves itself into the cgroup whose `cgroup.procs` is `$0`, then becomes `"$@"`, so every
 * descendant is counted from its first instruction.
 */
export const JOIN_CGROUP_SCRIPT = 'echo $$ > "$0" || exit 125; exec "$@"';

const REMOVE_ATTEMPTS = 20;
const REMOVE_INTERVAL_MS = 250;

/** Directory of this process's pids cgroup (v1 `pids` hierarchy, or v2 with the pids controller delegated), if writable. */
function pidsBase(): string | undefined {
  let table: string;
  try {
    table = readFileSync("/proc/self/cgroup", "utf8");
  } catch {
    return undefined;
  }
  for (const line of table.split("\n")) {
    const [, controllers, path] = line.split(":", 3) as [string, string | undefined, string | undefined];
    if (controllers === undefined || path === undefined) continue;
    if (controllers.split(",").includes("pids") && existsSync(`/sys/fs/cgroup/pids${path}/cgroup.procs`)) return `/sys/fs/cgroup/pids${path}`.replace(/\/$/, "");
    if (controllers === "" && readOrEmpty(`/sys/fs/cgroup${path}/cgroup.subtree_control`).split(/\s+/).includes("pids")) return `/sys/fs/cgroup${path}`.replace(/\/$/, "");
  }
  return undefined;
}

/** Creates a pids cgroup named `name` with `pids.max` = `maxProcesses`; undefined where none can be made here. */
export function createPidsCgroup(name: string, maxProcesses: number): PidsCgroup | undefined {
  const base = pidsBase();
  if (base === undefined) return undefined;
  sweepAbandoned(base);
  const directory = `${base}/${name}`;
  try {
    mkdirSync(directory);
    writeFileSync(`${directory}/pids.max`, String(maxProcesses));
  } catch {
    tryRemove(directory);
    return undefined;
  }
  return {
    procsFile: `${directory}/cgroup.procs`,
    async remove() {
      for (let attempt = 1; !tryRemove(directory) && attempt < REMOVE_ATTEMPTS; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, REMOVE_INTERVAL_MS));
      }
    },
  };
}

/** A cgroup of this runtime empty for this long was left by a process that died before removing it. */
const ABANDONED_AFTER_MS = 60_000;

/** Removes `openma-*` cgroups with no process that are older than {@link ABANDONED_AFTER_MS}. */
function sweepAbandoned(base: string): void {
  let entries: string[];
  try {
    entries = readdirSync(base).filter((entry) => entry.startsWith("openma-"));
  } catch {
    return;
  }
  for (const entry of entries) {
    const directory = `${base}/${entry}`;
    try {
      if (Date.now() - statSync(directory).mtimeMs > ABANDONED_AFTER_MS && readFileSync(`${directory}/cgroup.procs`, "utf8").trim() === "") rmdirSync(directory);
    } catch {
      // In use or gone meanwhile.
    }
  }
}

function tryRemove(directory: string): boolean {
  try {
    rmdirSync(directory);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
}

function readOrEmpty(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}
