/**
 * Mapped processes: commands that see sandbox paths backed by host directories, either in a private
 * mount namespace (`namespace`) or with the paths rewritten (`rewrite`). No isolation boundary: see
 * `createConfinedRoot` for that.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";
import { createKeptNamespace } from "./namespaces.js";
import { spawnInKeptNamespace } from "./namespace-cache.js";
import { validateMounts } from "./paths.js";
import { spawnRewritten, spawnUnshared } from "./spawn.js";
import type {
  MappedCommand,
  MappedProcess,
  PathMappingMode,
  PathMounts,
  SpawnMappedOptions,
} from "./types.js";
import type { SandboxDuplexProcess } from "@open-managed-agents/sandbox";
import { childEnvironment } from "@open-managed-agents/runtime-utils/node";

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
      [
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        'mount --bind "$1" "$2" && test -e "$2/marker"',
        "probe",
        source,
        target,
      ],
      { stdio: "ignore", timeout: 5_000, env: childEnvironment(["PATH"]) },
    );
    return result.status === 0;
  } catch {
    return false;
  } finally {
    rmSync(probeRoot, { recursive: true, force: true });
  }
}

function resolveMode(mapping: PathMappingMode | "auto" | undefined): PathMappingMode {
  return mapping === undefined || mapping === "auto" ? detectPathMappingMode() : mapping;
}

/**
 * Starts `command` with sandbox paths mapped to host directories, in its own process group. In
 * `namespace` mode the first command of a mount table runs in a namespace of its own while one is
 * built to keep for the table; later commands enter the kept one (see
 * {@link SpawnMappedOptions.reuseNamespace}). A kept namespace is released after a minute unused, by
 * {@link releaseMountNamespace}, or with this process; no process stays behind to hold it.
 */
export function spawnMapped(options: SpawnMappedOptions): MappedProcess {
  const { mounts, identities } = validateMounts(options.mounts);
  const mode = resolveMode(options.mapping);
  if (mode === "rewrite") return spawnRewritten(mounts, options);
  if (options.reuseNamespace === false) return spawnUnshared(mounts, options);
  return spawnInKeptNamespace(mounts, identities, options);
}

/** Options of {@link createMountNamespace}. */
export interface CreateMountNamespaceOptions {
  /** Forces a mapping mode; `auto` uses {@link detectPathMappingMode}. @default "auto" */
  readonly mapping?: PathMappingMode | "auto";
}

/** A mount table ready to run commands, owned by its creator until {@link MountNamespace.dispose}. */
export interface MountNamespace {
  /** How its commands see the mounts. */
  readonly mode: PathMappingMode;
  /** The normalized table: mount point → absolute host directory. */
  readonly mounts: PathMounts;
  /** Starts a command like {@link spawnMapped} with this table. Throws `invalid_request` once disposed. */
  spawn(command: MappedCommand): MappedProcess;
  /** Releases the namespace; running commands keep it until they exit. Idempotent. */
  dispose(): void;
}

/**
 * Sets a mount table up once for many commands. In `namespace` mode it resolves once the namespace
 * is built, so even the first command enters it; a failed setup leaves each command to build its
 * own, which then fails the way the setup did (exit 125, the reason on stderr). In `rewrite` mode
 * nothing is kept. Throws `invalid_request` for a bad table, like {@link spawnMapped}.
 */
export async function createMountNamespace(
  mounts: PathMounts,
  options: CreateMountNamespaceOptions = {},
): Promise<MountNamespace> {
  const validated = validateMounts(mounts);
  const mode = resolveMode(options.mapping);
  const kept =
    mode === "namespace" ? createKeptNamespace(validated.mounts, validated.identities) : undefined;
  await kept?.settled();
  let disposed = false;
  return {
    mode,
    mounts: validated.mounts,
    spawn(command) {
      if (disposed)
        throw new InvalidRequestError({
          message: "the mount namespace was disposed",
          context: { mountPoints: Object.keys(validated.mounts) },
        });
      const current = validateMounts(validated.mounts);
      return kept === undefined
        ? spawnRewritten(current.mounts, command)
        : kept.spawn(command, current.identities);
    },
    dispose() {
      disposed = true;
      kept?.close();
    },
  };
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
