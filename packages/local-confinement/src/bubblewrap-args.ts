import { lstatSync, readlinkSync } from "node:fs";
import { mountPointsShortestFirst } from "./paths.js";
import type { PathMounts } from "./types.js";
import HOLDER_SCRIPT from "./scripts/build-root.sh";
import RUN_COMMAND_BASH from "./scripts/enter-bash.sh";
import RUN_COMMAND_SH from "./scripts/enter-sh.sh";

/** Network of a confined tree: the host's (so the sandbox reaches the control plane) or none at all. */
export type ConfinementNetwork = "shared" | "none";

/** Per-process resource bounds every confined command starts with (rlimits, inherited by its children). */
export interface ConfinementLimits {
  /** `RLIMIT_NPROC`: processes of the container's user, counted in the container's own user namespace. @default 256 */
  readonly maxProcesses: number;
  /** `RLIMIT_NOFILE`: open descriptors per process. @default 4096 */
  readonly maxOpenFiles: number;
  /** `RLIMIT_FSIZE`: largest file a process may write, in bytes. @default 4 GiB */
  readonly maxFileBytes: number;
  /** `RLIMIT_AS`: address space of one process, in bytes (a memory bound per process, not per container). @default 16 GiB */
  readonly maxMemoryBytes: number;
  /**
   * Memory of all the container's processes together, in bytes, through a memory cgroup (swap counted);
   * past it the kernel's OOM killer ends a process of the container. Refused with `capability_unsupported`
   * where the machine gives no memory cgroup. @default undefined (no bound)
   */
  readonly maxContainerMemoryBytes?: number | undefined;
  /**
   * CPU time of all the container's processes together, in cores (`1.5` = one and a half), through a CPU
   * cgroup's quota. Refused with `capability_unsupported` where the machine gives no CPU cgroup. @default undefined (no bound)
   */
  readonly maxCpus?: number | undefined;
}

/** Defaults of {@link ConfinementLimits}. */
export const DEFAULT_CONFINEMENT_LIMITS: ConfinementLimits = {
  maxProcesses: 256,
  maxOpenFiles: 4096,
  maxFileBytes: 4 * 1024 ** 3,
  maxMemoryBytes: 16 * 1024 ** 3,
};

/** Top-level host directories a confined root is built from; everything else of the host stays invisible. */
const SYSTEM_ENTRIES = [
  "usr",
  "bin",
  "sbin",
  "lib",
  "lib32",
  "lib64",
  "libx32",
  "etc",
  "var",
  "opt",
] as const;

/** How each system entry appears in a confined root: a copy-on-write layer over the host's directory, or the host's symlink. */
export interface RootPlan {
  /** Directories mounted as overlayfs (lower = the host's, upper and work in the container's tree). */
  readonly overlays: readonly string[];
  /** Merged-/usr symlinks (`bin → usr/bin`), recreated as they are on the host. */
  readonly symlinks: readonly (readonly [name: string, target: string])[];
}

/** Reads the host's layout once: which system entries are directories and which are symlinks. */
export function planRoot(): RootPlan {
  const overlays: string[] = [];
  const symlinks: [string, string][] = [];
  for (const name of SYSTEM_ENTRIES) {
    try {
      const info = lstatSync(`/${name}`);
      if (info.isSymbolicLink()) symlinks.push([name, readlinkSync(`/${name}`)]);
      else if (info.isDirectory()) overlays.push(name);
    } catch {
      // Not on this host (lib32, libx32 on most).
    }
  }
  return { overlays, symlinks };
}

/** What {@link holderArgs} needs. */
export interface HolderArgsInput {
  /** Container tree on the host; `rootfs`, `upper` and `work` are created in it. */
  readonly tree: string;
  /** Container path → host directory, bound over the root (e.g. `/workspace`). */
  readonly mounts: PathMounts;
  readonly plan: RootPlan;
  readonly network: ConfinementNetwork;
  readonly hostname: string;
  /** Absolute path of the `bwrap` binary on the host. */
  readonly bwrap: string;
  /** Descriptor bubblewrap writes its JSON info (with `child-pid`) to. */
  readonly infoFd: number;
  /** Descriptor bubblewrap reads its options from (NUL-separated), so no host path shows in the container's `ps`. */
  readonly argsFd: number;
  /** Further host paths (files or directories) bound at container paths, after the mounts. */
  readonly extraBinds?: readonly (readonly [hostPath: string, containerPath: string])[];
  /** The first process instead of {@link INIT}: it must print `ready` and exit when its stdin closes. */
  readonly init?: readonly string[];
}

/**
 * Process the holder keeps as the container's first process: it reports readiness once every mount is in
 * place (bubblewrap runs it only then) and lives until its stdin closes, which ends the container.
 */
const INIT = ["/bin/sh", "-c", "echo ready; read -r _ || true"];

/** The holder's command line, and bubblewrap's options to write to `argsFd` (then close it). */
export interface HolderCommand {
  readonly argv: string[];
  readonly bwrapOptions: string;
}

/** `unshare` arguments that build the confined root (`scripts/build-root.sh`) and keep it with {@link INIT} as its first process. */
export function holderArgs(input: HolderArgsInput): HolderCommand {
  const binds = mountPointsShortestFirst(input.mounts).flatMap((mountPoint) => [
    "--bind",
    input.mounts[mountPoint] as string,
    mountPoint,
  ]);
  // The host's /var/tmp holds other programs' files; the container gets a fresh one of its own.
  const privateVarTmp = input.plan.overlays.includes("var")
    ? ["--bind", `${input.tree}/private/var/tmp`, "/var/tmp"]
    : [];
  const options = [
    "--bind",
    `${input.tree}/rootfs`,
    "/",
    ...privateVarTmp,
    ...binds,
    ...(input.extraBinds ?? []).flatMap(([hostPath, containerPath]) => [
      "--bind",
      hostPath,
      containerPath,
    ]),
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--unshare-all",
    ...(input.network === "shared" ? ["--share-net"] : []),
    "--hostname",
    input.hostname,
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--info-fd",
    String(input.infoFd),
    "--chdir",
    "/",
  ];
  const argv = [
    "--mount",
    "--propagation",
    "private",
    "--",
    "/bin/sh",
    "-c",
    HOLDER_SCRIPT,
    "openma-confine",
    input.tree,
    ...input.plan.overlays,
    "--",
    ...input.plan.symlinks.flat(),
    "--",
    input.bwrap,
    "--args",
    String(input.argsFd),
    "--",
    ...(input.init ?? INIT),
  ];
  return { argv, bwrapOptions: options.map((option) => `${option}\0`).join("") };
}

/** What {@link enterArgs} needs. */
export interface EnterArgsInput {
  /**
   * Each namespace the container has of its own: its `nsenter` flag (`--user`, `--mount`, …) and the
   * descriptor, in the started process, of the server's handle on it. Descriptors, not a pid: a pid may
   * name another process once the container's first one is gone, a held namespace never does.
   */
  readonly namespaces: readonly (readonly [flag: string, fd: number])[];
  readonly limits: ConfinementLimits;
  readonly nsenter: string;
  /** Path of `setpriv`, the same inside the container (its `/usr` is the host's, copy-on-write). */
  readonly setpriv: string;
  /** Shell that closes descriptors and starts the command: `/bin/bash` where present, else `/bin/sh`. */
  readonly shell: string;
  readonly cwd: string;
  readonly command: string;
  readonly args: readonly string[];
}

/**
 * `prlimit` arguments that run one command in an existing confinement. The bounds are set on the host
 * before anything enters (raising them again needs a capability the command never has); `nsenter` joins
 * every namespace of the container and its root; `setpriv` empties the bounding set before the command
 * runs, so the command holds no capability at all, also not in the container's user namespace.
 */
export function enterArgs(input: EnterArgsInput): string[] {
  const { limits } = input;
  return [
    `--nproc=${limits.maxProcesses}`,
    `--nofile=${limits.maxOpenFiles}`,
    `--fsize=${limits.maxFileBytes}`,
    `--as=${limits.maxMemoryBytes}`,
    "--",
    input.nsenter,
    // Joining the mount namespace also moves to its root, the container's (bubblewrap pivoted into it).
    ...input.namespaces.map(([flag, fd]) => `${flag}=/proc/self/fd/${fd}`),
    "--",
    input.setpriv,
    "--bounding-set=-all",
    "--inh-caps=-all",
    "--no-new-privs",
    "--",
    input.shell,
    "-c",
    input.shell.endsWith("/bash") ? RUN_COMMAND_BASH : RUN_COMMAND_SH,
    "openma-enter",
    input.cwd,
    input.command,
    ...input.args,
  ];
}

/** `nsenter` flag of each namespace kind, by its name under `/proc/<pid>/ns`. */
export const NAMESPACE_FLAGS: Readonly<Record<string, string>> = {
  user: "--user",
  mnt: "--mount",
  pid: "--pid",
  ipc: "--ipc",
  uts: "--uts",
  cgroup: "--cgroup",
  net: "--net",
};
