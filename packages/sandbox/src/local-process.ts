/**
 * Runs commands as local processes that see sandbox paths (`/workspace`, `/mnt/session/outputs`) backed
 * by host directories. This module offers NO isolation boundary: the process runs as the current user
 * with the host's network and the rest of the host filesystem. It exists for tests and local stacks.
 *
 * Two ways to map paths, detected once per process and cached:
 * - `namespace`: when running as root on Linux and `unshare` works, each process gets a private mount
 *   namespace where every mount is bind-mounted at its literal sandbox path. Nothing is rewritten.
 * - `rewrite`: otherwise, the literal sandbox path prefixes in the command, its arguments, its working
 *   directory and its environment values are rewritten to the host directories, and the mapping is
 *   exported as `OPENMA_PATH_MAP` (JSON object, sandbox path → host directory).
 *
 * Every process leads its own process group, so {@link MappedProcess.kill} takes the whole tree.
 *
 * @module
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, posix, resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";
import type { SandboxDuplexProcess, SandboxProcessExit } from "./ports.js";

/** Sandbox path (absolute, e.g. `/workspace`) → host directory. */
export type PathMounts = Readonly<Record<string, string>>;

/** How sandbox paths reach the process: a private mount namespace or literal prefix rewriting. */
export type PathMappingMode = "namespace" | "rewrite";

/** Environment variable holding the mount table as JSON in `rewrite` mode. */
export const PATH_MAP_ENV = "OPENMA_PATH_MAP";

/** Working directory used when none is given. */
export const DEFAULT_SANDBOX_CWD = "/workspace";

/** Options of {@link spawnMapped}. */
export interface SpawnMappedOptions {
  /** Program to run; looked up on `PATH` when not absolute. May name a sandbox path. */
  readonly command: string;
  readonly args?: readonly string[];
  /** Sandbox path → host directory. Host directories must exist. */
  readonly mounts: PathMounts;
  /** Working directory as a sandbox path. @default "/workspace" */
  readonly cwd?: string;
  /** The complete environment of the process. @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Aborting kills the process group with SIGKILL. */
  readonly signal?: AbortSignal;
  /** Forces a mapping mode; `auto` uses {@link detectPathMappingMode}. @default "auto" */
  readonly mapping?: PathMappingMode | "auto";
}

/** A running mapped process. */
export interface MappedProcess {
  /** The Node child process; its stdin, stdout and stderr are pipes. */
  readonly child: ChildProcess;
  readonly pid: number | null;
  readonly mode: PathMappingMode;
  /** Signals the whole process group. A gone process is not an error. */
  kill(signal?: NodeJS.Signals): void;
  /** Resolves once the process exited and its stdio closed; never rejects (spawn failures exit with code 127). */
  readonly exited: Promise<SandboxProcessExit>;
}

let cachedMode: PathMappingMode | undefined;

/**
 * Whether private mount namespaces work here: root on Linux and a probe bind mount inside
 * `unshare --mount` succeeds. Probed once; the result is cached for the life of the process.
 */
export function detectPathMappingMode(): PathMappingMode {
  cachedMode ??= probeNamespaceSupport() ? "namespace" : "rewrite";
  return cachedMode;
}

function probeNamespaceSupport(): boolean {
  if (process.platform !== "linux" || process.getuid?.() !== 0) return false;
  const probeRoot = mkdtempSync(join(tmpdir(), "openma-ns-probe-"));
  try {
    const source = join(probeRoot, "source");
    const target = join(probeRoot, "target");
    mkdirSync(source);
    mkdirSync(target);
    writeFileSync(join(source, "marker"), "");
    const result = spawnSync(
      "unshare",
      ["--mount", "--propagation", "private", "sh", "-c", 'mount --bind "$1" "$2" && test -e "$2/marker"', "probe", source, target],
      { stdio: "ignore", timeout: 5_000 },
    );
    return result.status === 0;
  } catch {
    return false;
  } finally {
    rmSync(probeRoot, { recursive: true, force: true });
  }
}

/** Normalizes a sandbox path to an absolute POSIX path; relative paths resolve against `cwd`. */
export function normalizeSandboxPath(sandboxPath: string, cwd: string = DEFAULT_SANDBOX_CWD): string {
  if (sandboxPath.includes("\0")) {
    throw new InvalidRequestError({ message: "sandbox path contains a NUL byte", context: { path: sandboxPath.replace(/\0/g, "") } });
  }
  return posix.resolve("/", cwd, sandboxPath);
}

/**
 * Maps a sandbox path to the host path that backs it, for file I/O done from Node. The longest
 * matching mount wins; a path under no mount maps to itself, as the process would see it.
 */
export function mapPath(sandboxPath: string, mounts: PathMounts, cwd: string = DEFAULT_SANDBOX_CWD): string {
  const absolute = normalizeSandboxPath(sandboxPath, cwd);
  const normalized = normalizeMounts(mounts);
  for (const mountPoint of mountPointsLongestFirst(normalized)) {
    const hostDir = normalized[mountPoint] as string;
    if (absolute === mountPoint) return hostDir;
    if (absolute.startsWith(`${mountPoint}/`)) return join(hostDir, absolute.slice(mountPoint.length + 1));
  }
  return absolute;
}

/** Starts `command` with sandbox paths mapped to host directories, in its own process group. */
export function spawnMapped(options: SpawnMappedOptions): MappedProcess {
  const mounts = validateMounts(options.mounts);
  const mode = options.mapping === undefined || options.mapping === "auto" ? detectPathMappingMode() : options.mapping;
  const cwd = normalizeSandboxPath(options.cwd ?? DEFAULT_SANDBOX_CWD, "/");
  const env = { ...(options.env ?? process.env) };
  const args = options.args ?? [];
  let child: ChildProcess;
  if (mode === "namespace") {
    // The wrapper bind-mounts each host directory at its sandbox path, enters cwd, then execs the
    // command, so the pid stays the command's own and exit codes pass through untouched.
    const script = 'while [ "$1" != "--" ]; do mkdir -p "$1" && mount --bind "$2" "$1" || exit 125; shift 2; done; shift; cd "$1" || exit 125; shift; exec "$@"';
    const mountArgs = mountPointsShortestFirst(mounts).flatMap((mountPoint) => [mountPoint, mounts[mountPoint] as string]);
    child = spawn("unshare", ["--mount", "--propagation", "private", "sh", "-c", script, "openma-mount", ...mountArgs, "--", cwd, options.command, ...args], {
      cwd: "/",
      env,
      detached: true,
      stdio: "pipe",
    });
  } else {
    const rewrite = (value: string): string => rewriteSandboxPaths(value, mounts);
    const rewrittenEnv: Record<string, string> = {};
    for (const [key, value] of Object.entries(env)) if (value !== undefined) rewrittenEnv[key] = rewrite(value);
    rewrittenEnv[PATH_MAP_ENV] = JSON.stringify(mounts);
    child = spawn(rewrite(options.command), args.map(rewrite), {
      cwd: mapPath(cwd, mounts),
      env: rewrittenEnv,
      detached: true,
      stdio: "pipe",
    });
  }
  return wrapChild(child, mode, options.signal);
}

/**
 * Rewrites every literal occurrence of a mount point that starts a path (not preceded by a path
 * character, followed by `/`, the end, or a non-path character) to its host directory.
 */
export function rewriteSandboxPaths(value: string, mounts: PathMounts): string {
  let result = value;
  for (const mountPoint of mountPointsLongestFirst(mounts)) {
    const pattern = new RegExp(`(?<![\\w.\\-/])${escapeRegExp(mountPoint)}(?=/|$|[^\\w.\\-])`, "g");
    result = result.replace(pattern, () => mounts[mountPoint] as string);
  }
  return result;
}

/** Presents a mapped process as a {@link SandboxDuplexProcess} with web streams. */
export function toDuplexProcess(mapped: MappedProcess): SandboxDuplexProcess {
  const { child } = mapped;
  if (!child.stdin || !child.stdout || !child.stderr) {
    throw new InvalidRequestError({ message: "mapped process has no stdio pipes" });
  }
  // A consumer that closes stdin early must not crash the host with EPIPE.
  child.stdin.on("error", () => undefined);
  return {
    stdin: Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    stdout: Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
    stderr: Readable.toWeb(child.stderr) as ReadableStream<Uint8Array>,
    kill: (signal) => mapped.kill(signal ?? "SIGTERM"),
    exited: mapped.exited,
  };
}

function wrapChild(child: ChildProcess, mode: PathMappingMode, signal: AbortSignal | undefined): MappedProcess {
  const kill = (killSignal: NodeJS.Signals = "SIGTERM"): void => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, killSignal);
    } catch {
      // The group is already gone; killing a gone process is success.
    }
  };
  const onAbort = (): void => kill("SIGKILL");
  const exited = new Promise<SandboxProcessExit>((resolve) => {
    child.once("error", (error: NodeJS.ErrnoException) => {
      // spawn failed (e.g. ENOENT): report it like a shell would, with the reason on no stream.
      if (child.pid === undefined) resolve({ code: error.code === "ENOENT" ? 127 : 126, signal: null });
    });
    child.once("close", (code, closeSignal) => resolve({ code, signal: closeSignal }));
  }).finally(() => signal?.removeEventListener("abort", onAbort));
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort, { once: true });
  return { child, pid: child.pid ?? null, mode, kill, exited };
}

function normalizeMounts(mounts: PathMounts): PathMounts {
  const result: Record<string, string> = {};
  for (const [mountPoint, hostDir] of Object.entries(mounts)) {
    const normalized = posix.normalize(mountPoint).replace(/\/+$/, "");
    if (!mountPoint.startsWith("/") || normalized === "" || normalized.includes("\0")) {
      throw new InvalidRequestError({ message: `mount point must be an absolute path other than /: ${mountPoint}`, context: { mountPoint } });
    }
    result[normalized] = resolve(hostDir);
  }
  return result;
}

function validateMounts(mounts: PathMounts): PathMounts {
  const normalized = normalizeMounts(mounts);
  for (const [mountPoint, hostDir] of Object.entries(normalized)) {
    if (!existsSync(hostDir)) {
      throw new InvalidRequestError({ message: `host directory for ${mountPoint} does not exist: ${hostDir}`, context: { mountPoint, hostDir } });
    }
  }
  return normalized;
}

function mountPointsLongestFirst(mounts: PathMounts): string[] {
  return Object.keys(mounts).sort((left, right) => right.length - left.length);
}

function mountPointsShortestFirst(mounts: PathMounts): string[] {
  return mountPointsLongestFirst(mounts).reverse();
}

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
