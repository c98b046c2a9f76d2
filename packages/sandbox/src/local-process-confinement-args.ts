import { lstatSync, readlinkSync } from "node:fs";
import { mountPointsShortestFirst } from "./local-process-paths.js";
import type { PathMounts } from "./local-process-types.js";

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
}

/** Defaults of {@link ConfinementLimits}. */
export const DEFAULT_CONFINEMENT_LIMITS: ConfinementLimits = { maxProcesses: 256, maxOpenFiles: 4096, maxFileBytes: 4 * 1024 ** 3 };

/** Top-level host directories a confined root is built from; everything else of the host stays invisible. */
const SYSTEM_ENTRIES = ["usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "var", "opt"] as const;

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

/**
 * Shell code run as root in a private mount namespace (`unshare --mount`): it mounts one overlayfs per
 * system directory inside the container's tree, creates the merged-/usr symlinks and the container's own
 * mount points, then becomes bubblewrap. Overlay paths are relative to the tree (the script `cd`s into
 * it), so a tree path with `,` or `:` cannot break the mount options. The overlays exist only in that
 * namespace and bubblewrap's, never in the host's mount table, and vanish with the container.
 *
 * Arguments: tree, then overlay names, `--`, symlink name/target pairs, `--`, the bubblewrap command.
 */
export const HOLDER_SCRIPT = [
  'cd "$1" || exit 125; shift',
  'mkdir -p rootfs upper work || exit 125',
  'while [ "$1" != -- ]; do',
  '  mkdir -p "upper/$1" "work/$1" "rootfs/$1" || exit 125',
  '  mount -t overlay openma-root -o "lowerdir=/$1,upperdir=upper/$1,workdir=work/$1" "rootfs/$1" || exit 125',
  '  shift',
  'done; shift',
  'while [ "$1" != -- ]; do ln -sfn "$2" "rootfs/$1" || exit 125; shift 2; done; shift',
  'mkdir -p rootfs/proc rootfs/dev rootfs/root rootfs/home rootfs/mnt rootfs/run rootfs/srv || exit 125',
  'exec "$@"',
].join("\n");

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
}

/**
 * Process the holder keeps as the container's first process: it reports readiness once every mount is in
 * place (bubblewrap runs it only then) and lives until its stdin closes, which ends the container.
 */
const INIT = ["/bin/sh", "-c", "echo ready; read -r _ || true"];

/** `unshare` arguments that build the confined root and keep it with {@link INIT} as its first process. */
export function holderArgs(input: HolderArgsInput): string[] {
  const binds = mountPointsShortestFirst(input.mounts).flatMap((mountPoint) => ["--bind", input.mounts[mountPoint] as string, mountPoint]);
  const bwrap = [
    input.bwrap,
    "--bind", `${input.tree}/rootfs`, "/",
    ...binds,
    "--proc", "/proc",
    "--dev", "/dev",
    "--unshare-all",
    ...(input.network === "shared" ? ["--share-net"] : []),
    "--hostname", input.hostname,
    "--die-with-parent",
    "--new-session",
    "--cap-drop", "ALL",
    "--info-fd", String(input.infoFd),
    "--chdir", "/",
    "--",
    ...INIT,
  ];
  return [
    "--mount", "--propagation", "private", "--",
    "/bin/sh", "-c", HOLDER_SCRIPT, "openma-confine",
    input.tree, ...input.plan.overlays, "--", ...input.plan.symlinks.flat(), "--",
    ...bwrap,
  ];
}

/** After entering: go to the working directory and become the command. */
const RUN_COMMAND = 'cd "$1" || exit 125; shift; exec "$@"';

/** What {@link enterArgs} needs. */
export interface EnterArgsInput {
  /** Host pid of the container's first process. */
  readonly pid: number;
  /** `nsenter` flags of the namespaces the container has of its own (`--user`, `--mount`, …). */
  readonly namespaces: readonly string[];
  readonly limits: ConfinementLimits;
  readonly nsenter: string;
  /** Path of `setpriv`, the same inside the container (its `/usr` is the host's, copy-on-write). */
  readonly setpriv: string;
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
    `--nproc=${limits.maxProcesses}`, `--nofile=${limits.maxOpenFiles}`, `--fsize=${limits.maxFileBytes}`, "--",
    input.nsenter, "--target", String(input.pid),
    ...input.namespaces,
    "--root", "--",
    input.setpriv, "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--",
    "/bin/sh", "-c", RUN_COMMAND, "openma-enter", input.cwd, input.command, ...input.args,
  ];
}

/** `nsenter` flag of each namespace kind, by its name under `/proc/<pid>/ns`. */
export const NAMESPACE_FLAGS: Readonly<Record<string, string>> = {
  user: "--user", mnt: "--mount", pid: "--pid", ipc: "--ipc", uts: "--uts", cgroup: "--cgroup", net: "--net",
};
