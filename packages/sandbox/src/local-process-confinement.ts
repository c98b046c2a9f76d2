import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, openSync, readFileSync, readlinkSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { CapabilityUnsupportedError, InvalidConfigError, InvalidRequestError, SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import { wrapChild } from "./local-process-child.js";
import {
  type ConfinementLimits, type ConfinementNetwork, DEFAULT_CONFINEMENT_LIMITS, NAMESPACE_FLAGS, enterArgs, holderArgs, planRoot,
} from "./local-process-confinement-args.js";
import { JOIN_CGROUP_SCRIPT, createContainerCgroups } from "./local-process-cgroup.js";
import {
  EGRESS_FORWARDER, EGRESS_PROXY_ENV, EGRESS_SOCKET_PATH, type EgressHttpHandler, type EgressHttpsInterception, startEgressProxy,
} from "./local-process-egress-proxy.js";
import { EGRESS_TLS_ENV, installEgressTrust } from "./local-process-egress-trust.js";
import { findExecutable } from "./local-process-mount-script.js";
import { mapPath, normalizeSandboxPath, validateMounts } from "./local-process-paths.js";
import { resolveInRoot } from "./local-process-root-paths.js";
import { DEFAULT_SANDBOX_CWD, type MappedCommand, type MappedProcess, type PathMounts } from "./local-process-types.js";

export type { ConfinementLimits, ConfinementNetwork } from "./local-process-confinement-args.js";
export { DEFAULT_CONFINEMENT_LIMITS } from "./local-process-confinement-args.js";

/**
 * How commands of a local container run: `bubblewrap` confines them (own mount, PID, IPC, UTS, user and
 * cgroup namespaces, no capabilities, a copy-on-write root); `unconfined-unsafe` runs them on the host as
 * the server's user, with only the sandbox paths mapped. The unsafe mode is never a default.
 */
export type ConfinementMode = "bubblewrap" | "unconfined-unsafe";

/** Options of {@link createConfinedRoot}. */
export interface ConfinedRootOptions {
  /** The container's host directory; its root's own files (`rootfs`, `upper`, `work`) are created in it. */
  readonly tree: string;
  /** Container path → existing host directory bound over the root (`/workspace`, `/tmp`, …). */
  readonly mounts: PathMounts;
  /** @default "shared" */
  readonly network?: ConfinementNetwork;
  readonly limits?: Partial<ConfinementLimits>;
  /** Host name inside the container. @default "sandbox" */
  readonly hostname?: string;
  /**
   * With `network: "none"`: the only way out is a filtering HTTP(S) proxy on the host that lets through
   * these destinations (`host`, `host:port`, `*.domain`; no port = 80 and 443). Commands get
   * `HTTP(S)_PROXY` pointing at it; a command that ignores them has no network at all.
   */
  readonly egressAllowList?: readonly string[];
  /**
   * With `network: "none"`, instead of `egressAllowList`: the proxy hands every plain-HTTP request to this
   * handler and refuses every `CONNECT` (403) but those `egressHttps` intercepts. Commands get
   * `HTTP(S)_PROXY` as with an allow-list.
   */
  readonly egressHandler?: EgressHttpHandler;
  /**
   * With `egressHandler`: the HTTPS the proxy terminates and hands to the handler. The container's own
   * copy of `/etc` gets the CA certificate (never its key) and commands get `NODE_EXTRA_CA_CERTS`,
   * `SSL_CERT_FILE` and `REQUESTS_CA_BUNDLE` pointing at it.
   */
  readonly egressHttps?: EgressHttpsInterception;
}

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
  readonly egress: { readonly allowList: readonly string[]; readonly refused: readonly string[] } | undefined;
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
  hostPath(path: string, options?: { readonly followFinal?: boolean; readonly cwd?: string }): string;
  /** Ends the container: its first process exits, which kills every process left in its PID namespace. Idempotent. */
  dispose(): void;
  /** Settles once the first process is gone. */
  readonly ended: Promise<void>;
}

const SETUP_TIMEOUT_MS = 15_000;
const MAX_ERROR_TEXT = 2_048;
const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const TOOLS = ["bwrap", "unshare", "nsenter", "prlimit", "setpriv"] as const;
const INSTALL_HINT = "install bubblewrap (`apt-get install -y bubblewrap`, or `npm run bootstrap` as root) and util-linux";

let checked: string | undefined;

/**
 * Throws `capability_unsupported` saying what is missing when bubblewrap confinement cannot run here:
 * Linux, root (the copy-on-write root is an overlayfs mount), overlayfs, and the tools. Checked once.
 */
export function assertConfinementAvailable(): void {
  checked ??= missingRequirement() ?? "";
  if (checked === "") return;
  throw new CapabilityUnsupportedError({
    message: `bubblewrap confinement is unavailable: ${checked}; ${INSTALL_HINT}`,
    context: { confinement: "bubblewrap", missing: checked },
  });
}

/** Whether bubblewrap confinement can run here (see {@link assertConfinementAvailable}). */
export function isConfinementAvailable(): boolean {
  checked ??= missingRequirement() ?? "";
  return checked === "";
}

function missingRequirement(): string | undefined {
  if (process.platform !== "linux") return `it needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return "it needs root (the copy-on-write root is an overlayfs mount)";
  const missing = TOOLS.filter((tool) => findExecutable(tool) === null);
  if (missing.length > 0) return `${missing.join(", ")} not found on PATH`;
  try {
    if (!/\toverlay\n/.test(readFileSync("/proc/filesystems", "utf8"))) return "the kernel has no overlayfs";
  } catch {
    return "/proc/filesystems is unreadable";
  }
  return undefined;
}

/** Starts a container's confinement and resolves once commands can enter it. */
export async function createConfinedRoot(options: ConfinedRootOptions): Promise<ConfinedRoot> {
  assertConfinementAvailable();
  const { mounts } = validateMounts(options.mounts);
  const network = options.network ?? "shared";
  const limits = { ...DEFAULT_CONFINEMENT_LIMITS, ...options.limits };
  for (const field of ["maxContainerMemoryBytes", "maxCpus"] as const) {
    const value = limits[field];
    if (value !== undefined && !(Number.isFinite(value) && value > 0)) {
      throw new InvalidConfigError({ message: `limits.${field} must be a positive number`, context: { field: `limits.${field}` } });
    }
  }
  if (options.egressAllowList !== undefined && options.egressHandler !== undefined) {
    throw new InvalidConfigError({ message: "egressAllowList and egressHandler exclude each other", context: { field: "egressHandler" } });
  }
  if (options.egressHttps !== undefined && options.egressHandler === undefined) {
    throw new InvalidConfigError({ message: "egressHttps needs egressHandler: the intercepted requests go to it", context: { field: "egressHttps" } });
  }
  const egressPolicy = options.egressHandler !== undefined ? { handleHttp: options.egressHandler, https: options.egressHttps } : options.egressAllowList;
  if (egressPolicy !== undefined && network !== "none") {
    const field = options.egressHandler !== undefined ? "egressHandler" : "egressAllowList";
    throw new InvalidConfigError({
      message: `${field} needs network: "none": with the host network a command could go around the proxy`,
      context: { field },
    });
  }
  if (egressPolicy !== undefined && !process.execPath.startsWith("/usr/")) {
    throw new CapabilityUnsupportedError({
      message: `the egress forwarder runs this Node inside the container, so it must live under /usr (it is ${process.execPath})`,
      context: { execPath: process.execPath },
    });
  }
  await mkdir(options.tree, { recursive: true });
  // Every process of the container, the first one and each command, joins its cgroups before it
  // enters: RLIMIT_NPROC does not bind a container whose root is the host's uid 0, and rlimits bind one
  // process each. A requested memory or CPU bound the machine cannot give refuses here.
  const cgroup = createContainerCgroups(`openma-${randomBytes(8).toString("hex")}`, {
    maxProcesses: limits.maxProcesses, maxMemoryBytes: limits.maxContainerMemoryBytes, maxCpus: limits.maxCpus,
  });
  let proxy: Awaited<ReturnType<typeof startEgressProxy>> | undefined;
  try {
    proxy = egressPolicy === undefined ? undefined : await startEgressProxy(egressPolicy);
  } catch (error) {
    await cgroup.remove();
    throw error;
  }
  const joining = (command: string, args: readonly string[]): [string, string[]] =>
    cgroup.procsFiles.length === 0 ? [command, [...args]] : ["/bin/sh", ["-c", JOIN_CGROUP_SCRIPT, "openma-join", ...cgroup.procsFiles, "--", command, ...args]];
  const holderCommand = holderArgs({
    tree: options.tree, mounts, plan: planRoot(), network, hostname: options.hostname ?? "sandbox", bwrap: findExecutable("bwrap") as string, infoFd: 3, argsFd: 4,
    ...(proxy === undefined ? {} : { extraBinds: [[proxy.socketPath, EGRESS_SOCKET_PATH]], init: [process.execPath, "-e", EGRESS_FORWARDER] }),
  });
  const [holderProgram, holderArguments] = joining(findExecutable("unshare") as string, holderCommand.argv);
  const holder = spawn(holderProgram, holderArguments, { cwd: "/", env: { PATH: SYSTEM_PATH }, stdio: ["pipe", "pipe", "pipe", "pipe", "pipe"] });
  const optionsStream = holder.stdio[4] as NodeJS.WritableStream | null;
  optionsStream?.on("error", () => undefined);
  optionsStream?.end(holderCommand.bwrapOptions);
  const ended = new Promise<void>((resolve) => {
    holder.once("close", () => resolve());
    holder.once("error", () => resolve());
  }).then(async () => {
    await proxy?.close();
    await cgroup.remove();
  });
  holder.stdin?.on("error", () => undefined);
  const dispose = (): void => {
    holder.stdin?.end();
    if (holder.exitCode === null && holder.signalCode === null) holder.kill("SIGKILL");
  };
  let pid: number;
  let handles: { readonly flags: string[]; readonly fds: number[]; readonly rootFd: number };
  try {
    pid = await waitForReady(holder);
    handles = holdNamespaces(pid, network);

  } catch (error) {
    dispose();
    await ended;
    throw error;
  }
  const held = handles;
  void ended.then(() => {
    for (const fd of [...held.fds, held.rootFd]) closeSync(fd);
  });
  // In each started process the held descriptors follow stdin, stdout and stderr, in this order.
  const namespaces = held.flags.map((flag, index) => [flag, 3 + index] as const);
  const prlimit = findExecutable("prlimit") as string;
  const nsenter = findExecutable("nsenter") as string;
  const setpriv = findExecutable("setpriv") as string;
  const shell = existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh";
  // The held root descriptor reaches the container's root for as long as the server holds it.
  const rootPrefix = `/proc/${process.pid}/fd/${held.rootFd}`;
  const toHost = (containerPath: string): string => {
    const mapped = mapPath(containerPath, mounts, "/");
    return mapped === containerPath ? `${rootPrefix}${containerPath}` : mapped;
  };
  if (options.egressHttps !== undefined) {
    try {
      // Before any command runs, so none sees the bundle half written.
      await installEgressTrust((path) => toHost(resolveInRoot(path, toHost, { followFinal: false })), options.egressHttps.authority.certificatePem);
    } catch (error) {
      dispose();
      await ended;
      throw new SandboxFailedError({ message: `could not install the egress CA certificate in the container: ${String(error)}`, cause: error });
    }
  }
  let disposed = false;
  return {
    confinement: "bubblewrap",
    mode: "namespace",
    mounts,
    network,
    limits,
    pid,
    processCgroup: cgroup.controllers.pids,
    cgroups: cgroup.controllers,
    egress: proxy === undefined ? undefined : { allowList: [...(options.egressAllowList ?? [])], refused: proxy.refused },
    ended,
    spawn(command) {
      if (disposed) throw new InvalidRequestError({ message: "the confined container was disposed", context: { pid } });
      const cwd = normalizeSandboxPath(command.cwd ?? DEFAULT_SANDBOX_CWD, "/");
      const [program, args] = joining(prlimit, enterArgs({ namespaces, limits, nsenter, setpriv, shell, cwd, command: command.command, args: command.args ?? [] }));
      const child = spawn(program, args, {
        cwd: "/",
        env: { ...(proxy === undefined ? {} : EGRESS_PROXY_ENV), ...(options.egressHttps === undefined ? {} : EGRESS_TLS_ENV), ...(command.env ?? {}) },
        detached: true,
        // The descriptors reach the child at fork time; the entered shell closes them before the
        // command runs, so it inherits none.
        stdio: ["pipe", "pipe", "pipe", ...held.fds],
      });
      return wrapChild(child, "namespace", command.signal);
    },
    hostPath(path, pathOptions = {}) {
      const absolute = normalizeSandboxPath(path, pathOptions.cwd ?? DEFAULT_SANDBOX_CWD);
      return toHost(resolveInRoot(absolute, toHost, { followFinal: pathOptions.followFinal ?? true }));
    },
    dispose() {
      disposed = true;
      dispose();
    },
  };
}

/**
 * Opens a descriptor on every namespace the container does not share with this process, and on its root
 * directory, while its first process is known to be alive; the essential namespaces must be its own.
 */
function holdNamespaces(pid: number, network: ConfinementNetwork): { flags: string[]; fds: number[]; rootFd: number } {
  const flags: string[] = [];
  for (const [name, flag] of Object.entries(NAMESPACE_FLAGS)) {
    if (readlinkSync(`/proc/${pid}/ns/${name}`) !== readlinkSync(`/proc/self/ns/${name}`)) flags.push(flag);
  }
  const required = ["--user", "--mount", "--pid", ...(network === "none" ? ["--net"] : [])];
  const shared = required.filter((flag) => !flags.includes(flag));
  if (shared.length > 0) {
    throw new SandboxFailedError({ message: `bubblewrap did not give the container its own namespaces: ${shared.join(", ")}`, context: { shared } });
  }
  const names = Object.fromEntries(Object.entries(NAMESPACE_FLAGS).map(([name, flag]) => [flag, name]));
  const fds: number[] = [];
  try {
    for (const flag of flags) fds.push(openSync(`/proc/${pid}/ns/${names[flag] as string}`, "r"));
    return { flags, fds, rootFd: openSync(`/proc/${pid}/root`, "r") };
  } catch (error) {
    for (const fd of fds) closeSync(fd);
    throw new SandboxFailedError({ message: `could not hold the container's namespaces: ${String(error)}`, cause: error });
  }
}

/** Resolves with the first process's host pid once bubblewrap reported it and the process said `ready`. */
function waitForReady(holder: ChildProcess): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let output = "";
    let info = "";
    let errorText = "";
    let pid: number | undefined;
    const settle = (): void => {
      if (pid === undefined || !output.includes("ready\n")) return;
      cleanup();
      resolve(pid);
    };
    const fail = (reason: string): void => {
      cleanup();
      const detail = errorText.trim().slice(0, MAX_ERROR_TEXT);
      reject(new SandboxFailedError({ message: `confined container setup failed: ${reason}${detail === "" ? "" : `: ${detail}`}`, context: { reason } }));
    };
    const onOutput = (chunk: Buffer): void => {
      output += chunk.toString("utf8");
      settle();
    };
    const onInfo = (chunk: Buffer): void => {
      info += chunk.toString("utf8");
      const match = /"child-pid"\s*:\s*(\d+)/.exec(info);
      if (match !== null) pid = Number(match[1]);
      settle();
    };
    const onError = (chunk: Buffer): void => {
      if (errorText.length < MAX_ERROR_TEXT) errorText += chunk.toString("utf8");
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void => fail(`the setup exited with ${code ?? signal}`);
    const onSpawnError = (error: Error): void => fail(`could not start unshare (${error.message})`);
    const timer = setTimeout(() => fail(`no answer within ${SETUP_TIMEOUT_MS} ms`), SETUP_TIMEOUT_MS);
    const infoStream = holder.stdio[3] as NodeJS.ReadableStream | null;
    const cleanup = (): void => {
      clearTimeout(timer);
      holder.stdout?.off("data", onOutput);
      infoStream?.off("data", onInfo);
      holder.off("exit", onExit);
      holder.off("error", onSpawnError);
    };
    holder.stdout?.on("data", onOutput);
    holder.stderr?.on("data", onError);
    infoStream?.on("data", onInfo);
    holder.once("exit", onExit);
    holder.once("error", onSpawnError);
  });
}
