import { mkdir, open, readFile, rm, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { Readable } from "node:stream";
import {
  type SandboxCheckpointHandle,
  AbortedError,
  InvalidRequestError,
  LeaseLostError,
  NotFoundError,
  ProviderMismatchError,
  SandboxFailedError,
  UnsupportedOperationError,
  parseRecord,
  sandboxCheckpointHandleSchema,
} from "@open-managed-agents/runtime-resource-contract";
import {
  type ConfinementMode,
  type MappedCommand,
  type MappedProcess,
  type PathMounts,
  mapPath,
  normalizeSandboxPath,
  spawnMapped,
  toDuplexProcess,
} from "../index.js";
import { confinedRootFor, releaseConfinedRoot } from "./local-confined-roots.js";
import type {
  ManagedSandboxRuntime,
  SandboxExecOptions,
  SandboxPort,
  SandboxRuntimeCapabilities,
} from "@open-managed-agents/sandbox";
import { execMapped } from "./local-exec.js";
import type { LocalCheckpointStore } from "./local-checkpoint-store.js";

/** Everything a runtime object needs; built by the provider. */
export interface LocalRuntimeSetup {
  readonly provider: string;
  readonly runtimeId: string;
  /** Host directory owned by this runtime; deleting it destroys the runtime. */
  readonly runtimeDir: string;
  /** Sandbox path of the workspace (the factory context's `workdir`). */
  readonly workdir: string;
  readonly mounts: PathMounts;
  readonly checkpoints: LocalCheckpointStore;
  readonly defaultTimeoutMs: number;
  readonly maxOutputBytes: number;
  /** `bubblewrap` runs commands in a confinement kept per runtime; `unconfined-unsafe` maps paths on the host. */
  readonly confinement: ConfinementMode;
}

/**
 * A local-subprocess runtime: {@link ManagedSandboxRuntime} with byte and stream file I/O and `setEnvVars`.
 * Confined by bubblewrap unless built `unconfined-unsafe`.
 */
export type LocalSubprocessRuntime = ManagedSandboxRuntime &
  Required<Pick<SandboxPort, "readFileBytes" | "writeFileBytes" | "readFileStream" | "setEnvVars">>;

const CAPABILITIES: SandboxRuntimeCapabilities = Object.freeze({
  lease: true,
  suspend: Object.freeze([]),
  checkpoint: Object.freeze(["filesystem"] as const),
});

/** Builds the runtime object over an existing (or already destroyed) runtime directory. */
export function createLocalRuntime(setup: LocalRuntimeSetup): LocalSubprocessRuntime {
  const { provider, runtimeId, runtimeDir, workdir, mounts } = setup;
  const workspaceDir = mapPath(workdir, mounts, "/");
  const live = new Set<MappedProcess>();
  const extraEnv: Record<string, string> = {};
  const track = (process: MappedProcess): void => {
    live.add(process);
    void process.exited.then(() => live.delete(process));
  };
  const exists = async (): Promise<boolean> =>
    (await stat(runtimeDir).catch(() => null))?.isDirectory() === true;
  const requireRunning = async (): Promise<void> => {
    if (!(await exists()))
      throw new NotFoundError({
        message: `local runtime ${runtimeId} does not exist or was destroyed`,
        context: { runtimeId },
      });
  };
  const baseEnv = (): Record<string, string> => ({
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: workdir,
    LANG: "C.UTF-8",
    ...extraEnv,
  });
  const confined = setup.confinement === "bubblewrap";
  const spawner = async (): Promise<(command: MappedCommand) => MappedProcess> => {
    if (!confined) return (command) => spawnMapped({ ...command, mounts });
    const root = await confinedRootFor(runtimeDir, mounts);
    return (command) => root.spawn(command);
  };
  // File I/O reaches only the runtime's mounts, so a stray path never writes elsewhere; in a confined
  // runtime symlinks resolve inside its root, as its own processes would see them.
  const hostPath = async (path: string): Promise<string> => {
    const sandboxPath = normalizeSandboxPath(path, workdir);
    if (confined) await requireRunning();
    const mapped = confined
      ? (await confinedRootFor(runtimeDir, mounts)).hostPath(sandboxPath)
      : mapPath(sandboxPath, mounts, workdir);
    const underMount = Object.keys(mounts).some(
      (mountPoint) => sandboxPath === mountPoint || sandboxPath.startsWith(`${mountPoint}/`),
    );
    if (!underMount || (!confined && mapped === sandboxPath)) {
      throw new InvalidRequestError({
        message: `path ${sandboxPath} is outside the runtime's mounts`,
        context: { path: sandboxPath },
      });
    }
    return mapped;
  };
  const fileError = (error: unknown, path: string): Error => {
    const code = (error as { code?: unknown }).code;
    if (code === "ENOENT" || code === "ENOTDIR")
      return new NotFoundError({ message: `no file at ${path}`, context: { path }, cause: error });
    if (code === "EISDIR")
      return new InvalidRequestError({
        message: `${path} is a directory`,
        context: { path },
        cause: error,
      });
    return new SandboxFailedError({
      message: `file operation on ${path} failed: ${String(code ?? error)}`,
      context: { path },
      cause: error,
    });
  };
  const writeBytes = async (path: string, content: Uint8Array): Promise<void> => {
    await requireRunning();
    const target = await hostPath(path);
    await mkdir(dirname(target), { recursive: true }).catch((error: unknown) =>
      Promise.reject(fileError(error, path)),
    );
    await writeFile(target, content).catch((error: unknown) =>
      Promise.reject(fileError(error, path)),
    );
  };

  return {
    async exec(command: string, options: SandboxExecOptions = {}) {
      await requireRunning();
      return execMapped({
        command,
        spawn: await spawner(),
        cwd: normalizeSandboxPath(options.cwd ?? workdir, workdir),
        env: { ...baseEnv(), ...options.env },
        timeoutMs: options.timeoutMs ?? setup.defaultTimeoutMs,
        maxOutputBytes: setup.maxOutputBytes,
        ...(options.signal ? { signal: options.signal } : {}),
        onStart: track,
      });
    },
    async readFile(path) {
      const target = await hostPath(path);
      return readFile(target, "utf8").catch((error: unknown) =>
        Promise.reject(fileError(error, path)),
      );
    },
    writeFile: (path, content) => writeBytes(path, Buffer.from(content, "utf8")),
    async readFileBytes(path) {
      const target = await hostPath(path);
      const bytes = await readFile(target).catch((error: unknown) =>
        Promise.reject(fileError(error, path)),
      );
      return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
    writeFileBytes: writeBytes,
    async readFileStream(path) {
      const target = await hostPath(path);
      // Opening first makes a missing file fail here, not on the first read of the stream.
      const handle = await open(target, "r").catch((error: unknown) =>
        Promise.reject(fileError(error, path)),
      );
      if ((await handle.stat()).isDirectory()) {
        await handle.close();
        throw fileError(Object.assign(new Error("EISDIR"), { code: "EISDIR" }), path);
      }
      return Readable.toWeb(handle.createReadStream()) as ReadableStream<Uint8Array>;
    },
    async setEnvVars(env) {
      Object.assign(extraEnv, env);
    },
    async spawnDuplexProcess(spec) {
      await requireRunning();
      const spawn = await spawner();
      const mapped = spawn({
        command: spec.command,
        ...(spec.args ? { args: spec.args } : {}),
        cwd: normalizeSandboxPath(spec.cwd ?? workdir, workdir),
        env: { ...baseEnv(), ...spec.env },
      });
      track(mapped);
      return toDuplexProcess(mapped);
    },
    runtimeHandle: () => ({ provider, runtimeId }),
    runtimeCapabilities: () => CAPABILITIES,
    async status() {
      return (await exists()) ? "running" : "stopped";
    },
    async renewLease() {
      // A local runtime has no provider-side lease: it lives as long as its directory.
      if (!(await exists()))
        throw new LeaseLostError({
          message: `local runtime ${runtimeId} is gone`,
          context: { runtimeId },
        });
    },
    async suspend(input) {
      throw new UnsupportedOperationError({
        message: `local-subprocess runtimes cannot be suspended (${input.kind})`,
        context: { kind: input.kind },
      });
    },
    async checkpoint(input) {
      if (input.kind !== "filesystem") {
        throw new UnsupportedOperationError({
          message: `local-subprocess runtimes checkpoint only the filesystem, not ${input.kind}`,
          context: { kind: input.kind },
        });
      }
      if (input.signal?.aborted)
        throw new AbortedError({ message: "checkpoint was aborted before it started" });
      await requireRunning();
      const checkpointId = await setup.checkpoints.save(workspaceDir);
      return {
        provider,
        checkpointId,
        sourceRuntimeId: runtimeId,
        kind: "filesystem",
        scope: "portable",
        ...(input.name ? { metadata: { name: input.name } } : {}),
      };
    },
    async resume(handle) {
      const parsed = parseOwnCheckpointHandle(handle, provider);
      if (parsed.scope !== "portable" || parsed.kind !== "filesystem") {
        throw new UnsupportedOperationError({
          message: `local-subprocess runtimes apply only portable filesystem checkpoints`,
          context: { scope: parsed.scope, kind: parsed.kind },
        });
      }
      await requireRunning();
      await setup.checkpoints.restoreInto(parsed.checkpointId, workspaceDir);
    },
    async destroy() {
      for (const process of live) process.kill("SIGKILL");
      await releaseConfinedRoot(runtimeDir);
      await rm(runtimeDir, { recursive: true, force: true });
    },
  };
}

/** Validates a foreign-or-own checkpoint handle against `provider`. */
export function parseOwnCheckpointHandle(
  handle: unknown,
  provider: string,
): SandboxCheckpointHandle {
  const parsed = parseRecord(sandboxCheckpointHandleSchema, handle, {
    record: "sandbox checkpoint handle",
  });
  if (parsed.provider !== provider) {
    throw new ProviderMismatchError({
      message: `checkpoint belongs to provider ${parsed.provider}, not ${provider}`,
      context: { expected: provider, actual: parsed.provider },
    });
  }
  return parsed;
}
