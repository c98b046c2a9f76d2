import {
  LeaseLostError,
  ManagedRuntimeError,
  UnsupportedOperationError,
  WORKSPACE_MOUNT_PATH,
} from "@open-managed-agents/runtime-resource-contract";
import type {
  ManagedSandboxRuntime,
  SandboxExecResult,
  SandboxMemoryMountPort,
  SandboxRuntimeStatus,
  SandboxWorkspaceBackupPort,
} from "@open-managed-agents/sandbox";
import { type MemoryMountSettings, createMemoryStoreMount } from "../memory/memory-mount.js";
import type {
  CloudflareBackupHandle,
  CloudflareContainerState,
  CloudflareSandbox,
} from "../sandbox/cloudflare-sandbox.js";
import { CLOUDFLARE_PROVIDER } from "../provider-id.js";
import { backupCheckpointHandle, backupFromCheckpointHandle } from "./backup-handle.js";
import { spawnCloudflareDuplexProcess } from "./duplex-process.js";

/** Deadline of an `exec` that names none. */
export const DEFAULT_EXEC_TIMEOUT_MS = 120_000;

/** Options of {@link createCloudflareRuntime}. */
export interface CloudflareRuntimeOptions {
  readonly sandbox: CloudflareSandbox;
  readonly runtimeId: string;
  /** Lifetime of workspace backups in seconds. */
  readonly backupTtlSec: number;
  /** The memory bucket; without it the runtime has no `mountMemoryStore` (unsupported). */
  readonly memoryMount?: MemoryMountSettings | null;
}

/** A Cloudflare runtime: the managed composition's view of one sandbox container. */
export type CloudflareRuntime = ManagedSandboxRuntime &
  SandboxWorkspaceBackupPort &
  Partial<SandboxMemoryMountPort> & {
    /** The narrow sandbox behind the runtime, for driver ports such as credential egress and mounts. */
    readonly sandbox: CloudflareSandbox;
  };

const GONE_STATES: readonly CloudflareContainerState[] = [
  "stopping",
  "stopped",
  "stopped_with_code",
];

/**
 * The tool-sandbox and runtime ports over one {@link CloudflareSandbox}. A restored backup is an overlay
 * that the platform drops when the container sleeps or restarts, so the runtime remembers the backup it
 * applied and applies it again before touching `/workspace` once the container is found stopped.
 */
export function createCloudflareRuntime(options: CloudflareRuntimeOptions): CloudflareRuntime {
  const { sandbox, runtimeId } = options;
  let applied: CloudflareBackupHandle | null = null;
  let restoring: Promise<void> | null = null;

  const restore = (backup: CloudflareBackupHandle): Promise<void> => {
    restoring ??= sandbox.restoreBackup(backup).finally(() => {
      restoring = null;
    });
    return restoring;
  };

  // The state read comes from Durable Object storage and never wakes the container.
  const ensureWorkspace = async (): Promise<void> => {
    if (applied === null) return;
    if (restoring) return restoring;
    if (GONE_STATES.includes(await sandbox.containerState())) await restore(applied);
  };

  const exec = async (
    command: string,
    execOptions: Parameters<ManagedSandboxRuntime["exec"]>[1] = {},
  ): Promise<SandboxExecResult> => {
    await ensureWorkspace();
    const result = await sandbox.exec(command, {
      timeoutMs: execOptions.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS,
      ...(execOptions.cwd ? { cwd: execOptions.cwd } : {}),
      ...(execOptions.env ? { env: execOptions.env } : {}),
      ...(execOptions.signal ? { signal: execOptions.signal } : {}),
    });
    const separator =
      result.stdout !== "" && result.stderr !== "" && !result.stdout.endsWith("\n") ? "\n" : "";
    return { ...result, output: `${result.stdout}${separator}${result.stderr}` };
  };

  const readFileBytes = async (path: string): Promise<Uint8Array> => {
    await ensureWorkspace();
    return sandbox.readFile(path);
  };
  const writeFileBytes = async (path: string, content: Uint8Array): Promise<void> => {
    await ensureWorkspace();
    await sandbox.writeFile(path, content);
  };

  const memoryMount = options.memoryMount;
  return {
    sandbox,
    ...(memoryMount ? { mountMemoryStore: createMemoryStoreMount(sandbox, memoryMount) } : {}),
    exec,
    readFileBytes,
    writeFileBytes,
    readFile: async (path) => new TextDecoder().decode(await readFileBytes(path)),
    writeFile: (path, content) => writeFileBytes(path, new TextEncoder().encode(content)),
    async spawnDuplexProcess(spec) {
      await ensureWorkspace();
      return spawnCloudflareDuplexProcess(sandbox, spec);
    },
    renewActivityTimeout: () => sandbox.renewActivityTimeout(),

    runtimeHandle: () => ({ provider: CLOUDFLARE_PROVIDER, runtimeId }),
    runtimeCapabilities: () => ({ lease: true, suspend: [], checkpoint: ["filesystem"] }),
    async status(): Promise<SandboxRuntimeStatus> {
      const state = await sandbox.containerState();
      return GONE_STATES.includes(state) ? "stopped" : "running";
    },
    async renewLease() {
      // A container that stopped under a lease lost its processes: the lease is gone, not renewable.
      if (GONE_STATES.includes(await sandbox.containerState())) {
        throw new LeaseLostError({
          message: `the container of runtime ${runtimeId} is no longer running`,
          context: { runtimeId },
        });
      }
      await sandbox.renewActivityTimeout();
    },
    async suspend() {
      throw new UnsupportedOperationError({
        message:
          "Cloudflare containers cannot be retained and resumed; workspaces use checkpoint_restore",
      });
    },
    async resume(handle) {
      const backup = backupFromCheckpointHandle(handle);
      await restore(backup);
      applied = backup;
    },
    async checkpoint({ kind, name }) {
      if (kind !== "filesystem")
        throw new UnsupportedOperationError({
          message: `Cloudflare checkpoints capture the filesystem only, not ${kind}`,
          context: { kind },
        });
      await ensureWorkspace();
      const backup = await sandbox.createBackup({
        dir: WORKSPACE_MOUNT_PATH,
        ttlSec: options.backupTtlSec,
        ...(name ? { name } : {}),
      });
      return backupCheckpointHandle(backup, runtimeId);
    },
    async createWorkspaceBackup({ name, ttlSec }) {
      await ensureWorkspace();
      return sandbox.createBackup({ dir: WORKSPACE_MOUNT_PATH, ttlSec, ...(name ? { name } : {}) });
    },
    async restoreWorkspaceBackup(handle) {
      const backup = {
        id: handle.id,
        dir: handle.dir,
        ...(handle.localBucket ? { localBucket: true } : {}),
      };
      await restore(backup);
      applied = backup;
    },
    async destroy() {
      applied = null;
      try {
        await sandbox.destroy();
      } catch (error) {
        if (!ManagedRuntimeError.hasCode(error, "not_found")) throw error;
      }
    },
  };
}
