import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { CapabilityUnsupportedError } from "@open-managed-agents/runtime-resource-contract";
import JOIN_CGROUPS from "./scripts/join-cgroups.sh";

/** Bounds a container's cgroups put on all of its processes together. */
export interface ContainerCgroupLimits {
  /** `pids.max`; where no pids cgroup can be made, the container goes without (RLIMIT_NPROC still applies). */
  readonly maxProcesses: number;
  /** Memory of all processes together (v1 `memory.limit_in_bytes`, v2 `memory.max`, swap included); undefined = none. */
  readonly maxMemoryBytes?: number | undefined;
  /** CPU time as a number of cores (v1 `cpu.cfs_quota_us`, v2 `cpu.max`); undefined = none. */
  readonly maxCpus?: number | undefined;
}

/** The cgroups holding every process of one container, one per controller in use. */
export interface ContainerCgroups {
  /** The `cgroup.procs` of each; a process writes its pid to all of them to join. */
  readonly procsFiles: readonly string[];
  /** Which bounds are in force. */
  readonly controllers: { readonly pids: boolean; readonly memory: boolean; readonly cpu: boolean };
  /** Removes the cgroups once their last processes are gone (retried for a few seconds while they exit). */
  remove(): Promise<void>;
}

/**
 * The command line that runs `command` inside every cgroup of `procsFiles` from its first instruction
 * (`scripts/join-cgroups.sh`), or the command itself when there is none to join.
 */
export function joiningCgroups(
  procsFiles: readonly string[],
  command: string,
  args: readonly string[],
): [string, string[]] {
  if (procsFiles.length === 0) return [command, [...args]];
  return ["/bin/sh", ["-c", JOIN_CGROUPS, "openma-join", ...procsFiles, "--", command, ...args]];
}

const REMOVE_ATTEMPTS = 20;
const REMOVE_INTERVAL_MS = 250;
/** CFS period for a CPU quota: the kernel's default, 100 ms. */
const CPU_PERIOD_US = 100_000;

/** Directory of this process's cgroup for `controller` (v1 hierarchy, or v2 with the controller delegated), if writable. */
function controllerBase(controller: string): string | undefined {
  let table: string;
  try {
    table = readFileSync("/proc/self/cgroup", "utf8");
  } catch {
    return undefined;
  }
  for (const line of table.split("\n")) {
    const [, controllers, path] = line.split(":", 3) as [
      string,
      string | undefined,
      string | undefined,
    ];
    if (controllers === undefined || path === undefined) continue;
    if (controllers.split(",").includes(controller)) {
      for (const mount of [controller, controllers]) {
        if (existsSync(`/sys/fs/cgroup/${mount}${path}/cgroup.procs`))
          return `/sys/fs/cgroup/${mount}${path}`.replace(/\/$/, "");
      }
    }
    if (
      controllers === "" &&
      readOrEmpty(`/sys/fs/cgroup${path}/cgroup.subtree_control`).split(/\s+/).includes(controller)
    )
      return `/sys/fs/cgroup${path}`.replace(/\/$/, "");
  }
  return undefined;
}

/** Creates `<base>/<name>` and writes `settings` (file → value, in order; a file that does not exist is skipped when optional). */
function makeCgroup(
  base: string,
  name: string,
  settings: readonly (readonly [file: string, value: string, optional: boolean])[],
): string | undefined {
  sweepAbandoned(base);
  const directory = `${base}/${name}`;
  try {
    mkdirSync(directory);
    for (const [file, value, optional] of settings) {
      if (optional && !existsSync(`${directory}/${file}`)) continue;
      writeFileSync(`${directory}/${file}`, value);
    }
    return directory;
  } catch {
    tryRemove(directory);
    return undefined;
  }
}

/**
 * Creates the cgroups of one container named `name`. A pids cgroup where one can be made; a memory and a
 * CPU cgroup when their bound is given, and then they are required: where the machine has no writable
 * controller for a requested bound → `capability_unsupported` naming it (nothing is left behind).
 */
export function createContainerCgroups(
  name: string,
  limits: ContainerCgroupLimits,
): ContainerCgroups {
  const directories: string[] = [];
  const refuse = (bound: string, controller: string): never => {
    for (const directory of directories) tryRemove(directory);
    throw new CapabilityUnsupportedError({
      message: `${bound} needs a writable ${controller} cgroup (v1 hierarchy or v2 with ${controller} delegated to this process's cgroup), which this machine does not give`,
      context: { bound, controller },
    });
  };
  const pidsBase = controllerBase("pids");
  const pids =
    pidsBase === undefined
      ? undefined
      : makeCgroup(pidsBase, name, [["pids.max", String(limits.maxProcesses), false]]);
  if (pids !== undefined) directories.push(pids);
  if (limits.maxMemoryBytes !== undefined) {
    const base = controllerBase("memory");
    const bytes = String(limits.maxMemoryBytes);
    // v1 accounts swap apart (memsw, when enabled); v2 gets no swap at all, so the bound is the memory used.
    const memory =
      base === undefined
        ? undefined
        : existsSync(`${base}/memory.limit_in_bytes`)
          ? makeCgroup(base, name, [
              ["memory.limit_in_bytes", bytes, false],
              ["memory.memsw.limit_in_bytes", bytes, true],
            ])
          : makeCgroup(base, name, [
              ["memory.max", bytes, false],
              ["memory.swap.max", "0", true],
            ]);
    if (memory === undefined) refuse("maxMemoryBytes", "memory");
    else directories.push(memory);
  }
  if (limits.maxCpus !== undefined) {
    const base = controllerBase("cpu");
    const quota = String(Math.max(1_000, Math.round(limits.maxCpus * CPU_PERIOD_US)));
    const cpu =
      base === undefined
        ? undefined
        : existsSync(`${base}/cpu.cfs_quota_us`)
          ? makeCgroup(base, name, [
              ["cpu.cfs_period_us", String(CPU_PERIOD_US), false],
              ["cpu.cfs_quota_us", quota, false],
            ])
          : makeCgroup(base, name, [["cpu.max", `${quota} ${CPU_PERIOD_US}`, false]]);
    if (cpu === undefined) refuse("maxCpus", "cpu");
    else directories.push(cpu);
  }
  return {
    procsFiles: directories.map((directory) => `${directory}/cgroup.procs`),
    controllers: {
      pids: pids !== undefined,
      memory: limits.maxMemoryBytes !== undefined,
      cpu: limits.maxCpus !== undefined,
    },
    async remove() {
      for (const directory of directories) {
        for (let attempt = 1; !tryRemove(directory) && attempt < REMOVE_ATTEMPTS; attempt += 1) {
          await new Promise((resolve) => setTimeout(resolve, REMOVE_INTERVAL_MS));
        }
      }
    },
  };
}

/**
 * Throws what {@link createContainerCgroups} would for these bounds (`capability_unsupported` naming the
 * missing controller), by making and removing a probe set; a server checks this once at start.
 */
export async function assertContainerCgroupsAvailable(
  limits: Omit<ContainerCgroupLimits, "maxProcesses">,
): Promise<void> {
  if (limits.maxMemoryBytes === undefined && limits.maxCpus === undefined) return;
  await createContainerCgroups(`openma-probe-${process.pid}-${Date.now()}`, {
    ...limits,
    maxProcesses: 1,
  }).remove();
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
      if (
        Date.now() - statSync(directory).mtimeMs > ABANDONED_AFTER_MS &&
        readFileSync(`${directory}/cgroup.procs`, "utf8").trim() === ""
      )
        rmdirSync(directory);
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
