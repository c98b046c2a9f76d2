import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, readlinkSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { CapabilityUnsupportedError, InvalidRequestError, SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import { wrapChild } from "./local-process-child.js";
import {
  type ConfinementLimits, type ConfinementNetwork, DEFAULT_CONFINEMENT_LIMITS, NAMESPACE_FLAGS, enterArgs, holderArgs, planRoot,
} from "./local-process-confinement-args.js";
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
  /** Host pid of the container's first process; its `/proc/<pid>/root` is the container's root. */
  readonly pid: number;
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
  await mkdir(options.tree, { recursive: true });
  const holder = spawn(findExecutable("unshare") as string, holderArgs({
    tree: options.tree, mounts, plan: planRoot(), network, hostname: options.hostname ?? "sandbox", bwrap: findExecutable("bwrap") as string, infoFd: 3,
  }), { cwd: "/", env: { PATH: SYSTEM_PATH }, stdio: ["pipe", "pipe", "pipe", "pipe"] });
  const ended = new Promise<void>((resolve) => {
    holder.once("close", () => resolve());
    holder.once("error", () => resolve());
  });
  holder.stdin?.on("error", () => undefined);
  const dispose = (): void => {
    holder.stdin?.end();
    if (holder.exitCode === null && holder.signalCode === null) holder.kill("SIGKILL");
  };
  let pid: number;
  try {
    pid = await waitForReady(holder);
  } catch (error) {
    dispose();
    await ended;
    throw error;
  }
  const namespaces = ownNamespaces(pid, network);
  const prlimit = findExecutable("prlimit") as string;
  const nsenter = findExecutable("nsenter") as string;
  const setpriv = findExecutable("setpriv") as string;
  const toHost = (containerPath: string): string => {
    const mapped = mapPath(containerPath, mounts, "/");
    return mapped === containerPath ? `/proc/${pid}/root${containerPath}` : mapped;
  };
  let disposed = false;
  return {
    confinement: "bubblewrap",
    mode: "namespace",
    mounts,
    network,
    limits,
    pid,
    ended,
    spawn(command) {
      if (disposed) throw new InvalidRequestError({ message: "the confined container was disposed", context: { pid } });
      const cwd = normalizeSandboxPath(command.cwd ?? DEFAULT_SANDBOX_CWD, "/");
      const child = spawn(prlimit, enterArgs({ pid, namespaces, limits, nsenter, setpriv, cwd, command: command.command, args: command.args ?? [] }), {
        cwd: "/",
        env: { ...(command.env ?? {}) },
        detached: true,
        stdio: "pipe",
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

/** `nsenter` flags for every namespace the container does not share with this process; the essential ones must be its own. */
function ownNamespaces(pid: number, network: ConfinementNetwork): string[] {
  const own: string[] = [];
  for (const [name, flag] of Object.entries(NAMESPACE_FLAGS)) {
    if (readlinkSync(`/proc/${pid}/ns/${name}`) !== readlinkSync(`/proc/self/ns/${name}`)) own.push(flag);
  }
  const required = ["--user", "--mount", "--pid", ...(network === "none" ? ["--net"] : [])];
  const shared = required.filter((flag) => !own.includes(flag));
  if (shared.length > 0) {
    throw new SandboxFailedError({ message: `bubblewrap did not give the container its own namespaces: ${shared.join(", ")}`, context: { shared } });
  }
  return own;
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
