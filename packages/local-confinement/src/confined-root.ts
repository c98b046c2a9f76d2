import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { spawn } from "node:child_process";
import {
  CapabilityUnsupportedError,
  InvalidRequestError,
  SandboxFailedError,
} from "@open-managed-agents/runtime-resource-contract";
import { assertConfinementAvailable } from "./availability.js";
import {
  type ConfinementLimits,
  type ConfinementNetwork,
  enterArgs,
  holderArgs,
  planRoot,
} from "./bubblewrap-args.js";
import {
  type BubblewrapHolder,
  type HeldNamespaces,
  holdContainer,
  startHolder,
} from "./bubblewrap-holder.js";
import { type ContainerCgroups, createContainerCgroups, joiningCgroups } from "./cgroups.js";
import { wrapChild } from "./child-process.js";
import {
  type ConfinedRootOptions,
  type ParsedConfinedRootOptions,
  parseConfinedRootOptions,
} from "./confined-root-options.js";
import {
  EGRESS_PROXY_ENV,
  EGRESS_SOCKET_PATH,
  type EgressPolicy,
  type EgressProxy,
  egressForwarderCommand,
  startEgressProxy,
} from "./egress-proxy.js";
import { EGRESS_TLS_ENV, installEgressTrust } from "./egress-trust.js";
import { findExecutable } from "./mounts.js";
import { mapPath, normalizeSandboxPath, validateMounts } from "./paths.js";
import { resolveInRoot } from "./root-paths.js";
import {
  DEFAULT_SANDBOX_CWD,
  type MappedCommand,
  type MappedProcess,
  type PathMounts,
} from "./types.js";

/** A running confinement: the container's first process and how to run more commands beside it. */
export interface ConfinedRoot {
  readonly confinement: "bubblewrap";
  /** Container paths are literal inside, as in a private mount namespace. */
  readonly mode: "namespace";
  /** The normalized bind table. */
  readonly mounts: PathMounts;
  readonly network: ConfinementNetwork;
  readonly limits: ConfinementLimits;
  /** The egress proxy when an allow-list was given: destinations it refused, newest last. */
  readonly egress:
    | { readonly allowList: readonly string[]; readonly refused: readonly string[] }
    | undefined;
  /** Host pid of the container's first process (commands enter through held descriptors, never through this pid). */
  readonly pid: number;
  /** Whether a pids cgroup bounds the container's processes together (`limits.maxProcesses`); otherwise only `RLIMIT_NPROC` does. */
  readonly processCgroup: boolean;
  /**
   * Which cgroups bound the container's processes together: `pids` where the machine allows, `memory`
   * and `cpu` when `limits.maxContainerMemoryBytes` / `limits.maxCpus` were given (they are never skipped).
   */
  readonly cgroups: { readonly pids: boolean; readonly memory: boolean; readonly cpu: boolean };
  /** Starts a command inside the confinement, in its own process group. Throws `invalid_request` once disposed. */
  spawn(command: MappedCommand): MappedProcess;
  /**
   * Host path backing container path `path` (absolute, or relative to `cwd`), with every symlink resolved
   * inside the container's root: what a process in the container would open.
   */
  hostPath(
    path: string,
    options?: { readonly followFinal?: boolean; readonly cwd?: string },
  ): string;
  /** Ends the container: its first process exits, which kills every process left in its PID namespace. Idempotent. */
  dispose(): void;
  /** Settles once the first process is gone. */
  readonly ended: Promise<void>;
}

/**
 * Starts a container's confinement and resolves once commands can enter it. The steps, in order: check
 * the machine and the options, make the cgroups, start the egress proxy, start the holder (which builds
 * the root and becomes bubblewrap), hold its namespaces, install the egress CA; each step undoes the
 * earlier ones when it fails.
 */
export async function createConfinedRoot(input: ConfinedRootOptions): Promise<ConfinedRoot> {
  assertConfinementAvailable();
  const options = parseConfinedRootOptions(input);
  const { mounts } = validateMounts(options.mounts);
  if (options.egressPolicy !== undefined) assertForwarderRunsInside();
  await mkdir(options.tree, { recursive: true });
  const cgroup = createRootCgroups(options.limits);
  const proxy = await startProxy(options.egressPolicy, cgroup);
  const holder = startHolder(
    holderArgs({
      tree: options.tree,
      mounts,
      plan: planRoot(),
      network: options.network,
      hostname: options.hostname,
      bwrap: findExecutable("bwrap") as string,
      infoFd: 3,
      argsFd: 4,
      ...(proxy === undefined
        ? {}
        : { extraBinds: [[proxy.socketPath, EGRESS_SOCKET_PATH]], init: egressForwarderCommand() }),
    }),
    cgroup.procsFiles,
    async () => {
      await proxy?.close();
      await cgroup.remove();
    },
  );
  const { pid, held } = await holdContainer(holder, options.network);
  const toHost = hostPathMapper(mounts, held);
  const https = options.egressHttps;
  if (https !== undefined) await installTrust(holder, toHost, https.authority.certificatePem);
  return confinedRoot({ options, mounts, cgroup, proxy, holder, pid, held, toHost });
}

/** The egress forwarder runs this Node inside the container, whose `/usr` is the host's. */
function assertForwarderRunsInside(): void {
  if (process.execPath.startsWith("/usr/")) return;
  throw new CapabilityUnsupportedError({
    message:
      "the egress forwarder runs this Node inside the container, so it must live under /usr " +
      `(it is ${process.execPath})`,
    context: { execPath: process.execPath },
  });
}

/**
 * Every process of the container, the first one and each command, joins its cgroups before it enters:
 * RLIMIT_NPROC does not bind a container whose root is the host's uid 0, and rlimits bind one process
 * each. A requested memory or CPU bound the machine cannot give refuses here.
 */
function createRootCgroups(limits: ConfinementLimits): ContainerCgroups {
  return createContainerCgroups(`openma-${randomBytes(8).toString("hex")}`, {
    maxProcesses: limits.maxProcesses,
    maxMemoryBytes: limits.maxContainerMemoryBytes,
    maxCpus: limits.maxCpus,
  });
}

/** The proxy when there is an egress policy; the cgroups are removed when it cannot start. */
async function startProxy(
  policy: EgressPolicy | undefined,
  cgroup: ContainerCgroups,
): Promise<EgressProxy | undefined> {
  if (policy === undefined) return undefined;
  try {
    return await startEgressProxy(policy);
  } catch (error) {
    await cgroup.remove();
    throw error;
  }
}

/**
 * Host path of a container path: a mount's host directory, or the container's root reached through the
 * held descriptor.
 */
function hostPathMapper(
  mounts: PathMounts,
  held: HeldNamespaces,
): (containerPath: string) => string {
  const rootPrefix = `/proc/${process.pid}/fd/${held.rootFd}`;
  return (containerPath) => {
    const mapped = mapPath(containerPath, mounts, "/");
    return mapped === containerPath ? `${rootPrefix}${containerPath}` : mapped;
  };
}

/** Installs the egress CA certificate before any command runs, so none sees the bundle half written. */
async function installTrust(
  holder: BubblewrapHolder,
  toHost: (path: string) => string,
  certificatePem: string,
): Promise<void> {
  const inRoot = (path: string): string =>
    toHost(resolveInRoot(path, toHost, { followFinal: false }));
  try {
    await installEgressTrust(inRoot, certificatePem);
  } catch (error) {
    holder.dispose();
    await holder.ended;
    const message = `could not install the egress CA certificate in the container: ${String(error)}`;
    throw new SandboxFailedError({ message, cause: error });
  }
}

interface RunningRoot {
  readonly options: ParsedConfinedRootOptions;
  readonly mounts: PathMounts;
  readonly cgroup: ContainerCgroups;
  readonly proxy: EgressProxy | undefined;
  readonly holder: BubblewrapHolder;
  readonly pid: number;
  readonly held: HeldNamespaces;
  readonly toHost: (containerPath: string) => string;
}

/** The {@link ConfinedRoot} of a container that is up: commands enter it through the held descriptors. */
function confinedRoot(root: RunningRoot): ConfinedRoot {
  const { options, mounts, cgroup, proxy, holder, pid, held, toHost } = root;
  // In each started process the held descriptors follow stdin, stdout and stderr, in this order.
  const namespaces = held.flags.map((flag, index) => [flag, 3 + index] as const);
  const tools = {
    nsenter: findExecutable("nsenter") as string,
    setpriv: findExecutable("setpriv") as string,
    shell: existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh",
  };
  const prlimit = findExecutable("prlimit") as string;
  const environment = {
    ...(proxy === undefined ? {} : EGRESS_PROXY_ENV),
    ...(options.egressHttps === undefined ? {} : EGRESS_TLS_ENV),
  };
  let disposed = false;
  return {
    confinement: "bubblewrap",
    mode: "namespace",
    mounts,
    network: options.network,
    limits: options.limits,
    pid,
    processCgroup: cgroup.controllers.pids,
    cgroups: cgroup.controllers,
    egress:
      proxy === undefined
        ? undefined
        : { allowList: [...(options.egressAllowList ?? [])], refused: proxy.refused },
    ended: holder.ended,
    spawn(command) {
      if (disposed) {
        throw new InvalidRequestError({
          message: "the confined container was disposed",
          context: { pid },
        });
      }
      const cwd = normalizeSandboxPath(command.cwd ?? DEFAULT_SANDBOX_CWD, "/");
      const entering = enterArgs({
        namespaces,
        limits: options.limits,
        ...tools,
        cwd,
        command: command.command,
        args: command.args ?? [],
      });
      const [program, args] = joiningCgroups(cgroup.procsFiles, prlimit, entering);
      const child = spawn(program, args, {
        cwd: "/",
        env: { ...environment, ...(command.env ?? {}) },
        detached: true,
        // The descriptors reach the child at fork time; the entered shell closes them before the
        // command runs, so it inherits none.
        stdio: ["pipe", "pipe", "pipe", ...held.fds],
      });
      return wrapChild(child, "namespace", command.signal);
    },
    hostPath(path, pathOptions = {}) {
      const absolute = normalizeSandboxPath(path, pathOptions.cwd ?? DEFAULT_SANDBOX_CWD);
      return toHost(
        resolveInRoot(absolute, toHost, { followFinal: pathOptions.followFinal ?? true }),
      );
    },
    dispose() {
      disposed = true;
      holder.dispose();
    },
  };
}
