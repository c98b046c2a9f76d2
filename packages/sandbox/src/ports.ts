import type {
  SandboxCheckpointHandle,
  SandboxCheckpointKind,
} from "@open-managed-agents/runtime-resource-contract";

/** Options of {@link SandboxPort.exec}. */
export interface SandboxExecOptions {
  /** Deadline for the command. Implementations enforce it themselves, not only by asking the provider. */
  readonly timeoutMs?: number;
  /** Working directory inside the sandbox. @default "/workspace" */
  readonly cwd?: string;
  /** Extra environment for this command only. */
  readonly env?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

/** Result of a finished command. A non-zero exit is a result, not an error. */
export interface SandboxExecResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout and stderr interleaved in arrival order: what a readiness probe matches against. */
  readonly output: string;
}

/**
 * The runtime-agnostic tool sandbox. `exec`, `readFile` and `writeFile` are required; every other
 * capability is an optional member or an optional port, and a missing member means unsupported.
 * Hosts use the `supports*` guards and never treat a missing method as success.
 */
export interface SandboxPort {
  /** Runs a shell command (`sh -c`). Throws `timeout`, `aborted` or `sandbox_failed`; never for a non-zero exit. */
  exec(command: string, options?: SandboxExecOptions): Promise<SandboxExecResult>;
  /** Reads a UTF-8 file. Throws `not_found` when it does not exist. */
  readFile(path: string): Promise<string>;
  /** Writes a UTF-8 file, creating parent directories. */
  writeFile(path: string, content: string): Promise<void>;
  /** Reads a file as bytes. Throws `not_found` when it does not exist. */
  readFileBytes?(path: string): Promise<Uint8Array>;
  /** Writes bytes, creating parent directories. */
  writeFileBytes?(path: string, content: Uint8Array): Promise<void>;
  /** Streams a file's bytes; for files too large to hold in memory. */
  readFileStream?(path: string): Promise<ReadableStream<Uint8Array>>;
  /** Starts a background process. */
  startProcess?(command: string, options?: SandboxProcessOptions): Promise<ProcessHandle>;
  /** Sets environment variables for later commands. */
  setEnvVars?(env: Readonly<Record<string, string>>): Promise<void>;
  /** Stops and deletes the sandbox. Idempotent. */
  destroy?(): Promise<void>;
  /** Resets the provider's idle timer. */
  renewActivityTimeout?(): Promise<void>;
}

/** Options of {@link SandboxPort.startProcess}. */
export interface SandboxProcessOptions {
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
}

/** Status of a background process. */
export type ProcessStatus = "starting" | "running" | "completed" | "failed" | "killed" | "error";

/** A background process started by {@link SandboxPort.startProcess}. */
export interface ProcessHandle {
  readonly id: string;
  readonly pid: number | null;
  kill(signal?: "SIGTERM" | "SIGKILL"): Promise<void>;
  getLogs(): Promise<{ readonly stdout: string; readonly stderr: string }>;
  getStatus(): Promise<{ readonly status: ProcessStatus; readonly exitCode: number | null }>;
}

/** A process started with live stdio. */
export interface SandboxDuplexProcessSpec {
  readonly command: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

/** How a duplex process ended. */
export interface SandboxProcessExit {
  readonly code: number | null;
  readonly signal: string | null;
}

/** A running process with byte streams for stdin, stdout and stderr. */
export interface SandboxDuplexProcess {
  /** Accepts bytes; closing it closes the process's stdin. */
  readonly stdin: WritableStream<Uint8Array>;
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array>;
  kill(signal?: "SIGTERM" | "SIGKILL"): void;
  /** Resolves once the process exited and its output streams ended. */
  readonly exited: Promise<SandboxProcessExit>;
}

/** Live stdio processes: required for acp-sandbox and the supervised lane. */
export interface SandboxDuplexProcessPort {
  /** Throws `capability_unsupported` when stdin cannot be carried (e.g. `interactive_stdin_without_pty`). */
  spawnDuplexProcess(spec: SandboxDuplexProcessSpec): Promise<SandboxDuplexProcess>;
}

/** A workspace backup created by the provider. */
export interface SandboxWorkspaceBackupHandle {
  readonly id: string;
  readonly dir: string;
  readonly localBucket?: boolean;
}

/** Provider-native workspace backups (e.g. Cloudflare `createBackup`). */
export interface SandboxWorkspaceBackupPort {
  createWorkspaceBackup(input: {
    readonly name?: string;
    readonly ttlSec: number;
  }): Promise<SandboxWorkspaceBackupHandle>;
  restoreWorkspaceBackup(handle: SandboxWorkspaceBackupHandle): Promise<void>;
}

/** Durable mount of session outputs at `/mnt/session/outputs`. */
export interface SandboxSessionOutputMountPort {
  sessionOutputMountCapabilities(): { readonly durability: "durable" | "best_effort" };
  mountSessionOutputs(input: {
    readonly tenantId: string;
    readonly sessionId: string;
  }): Promise<void>;
}

/** Memory-store mounts at `/mnt/memory/<name>`. */
export interface SandboxMemoryMountPort {
  mountMemoryStore(input: {
    readonly storeName: string;
    readonly storeId: string;
    readonly readOnly: boolean;
  }): Promise<void>;
}

/** Managed workspace lifecycle: durable mount of `/workspace` owned by the provider. */
export interface SandboxManagedWorkspaceLifecyclePort {
  mountWorkspace(input: { readonly tenantId: string; readonly sessionId: string }): Promise<void>;
  unmountWorkspace(): Promise<void>;
}

/** Identity of a provider runtime. */
export interface SandboxRuntimeHandle {
  readonly provider: string;
  readonly runtimeId: string;
}

/** What a runtime can do with its own lifecycle. */
export interface SandboxRuntimeCapabilities {
  /** True when `renewLease` extends a real provider-side lease. */
  readonly lease: boolean;
  readonly suspend: readonly SandboxCheckpointKind[];
  readonly checkpoint: readonly SandboxCheckpointKind[];
}

/** Provider-reported state; `unknown` when it cannot be read without waking the runtime. */
export type SandboxRuntimeStatus = "running" | "suspended" | "stopped" | "unknown";

/** Lifecycle of one provider runtime. */
export interface SandboxRuntimePort {
  runtimeHandle(): SandboxRuntimeHandle;
  runtimeCapabilities(): SandboxRuntimeCapabilities;
  status(): Promise<SandboxRuntimeStatus>;
  /** Extends the provider lease (or checks liveness where there is none). Throws `lease_lost` when the runtime is gone. */
  renewLease(input: { readonly ttlMs: number }): Promise<void>;
  /** Retains the runtime; `unsupported_operation` unless `runtimeCapabilities().suspend` lists the kind. */
  suspend(input: { readonly kind: SandboxCheckpointKind }): Promise<SandboxCheckpointHandle>;
  /** Applies a checkpoint to this runtime (hydrate a portable archive, re-apply a backup). */
  resume(
    handle: SandboxCheckpointHandle,
    options?: { readonly signal?: AbortSignal },
  ): Promise<void>;
  /** Captures the runtime; `unsupported_operation` unless `runtimeCapabilities().checkpoint` lists the kind. */
  checkpoint(input: {
    readonly kind: SandboxCheckpointKind;
    readonly name?: string;
    readonly signal?: AbortSignal;
  }): Promise<SandboxCheckpointHandle>;
  /** Stops and deletes the runtime. Idempotent; a gone runtime is success. */
  destroy(): Promise<void>;
}

/** Host-side context for creating a sandbox. */
export interface SandboxFactoryContext {
  readonly sessionId: string;
  /** Host directory or in-sandbox path used as the workspace. */
  readonly workdir: string;
  readonly memoryRoot?: string;
  readonly outputsRoot?: string;
  /**
   * Write-ahead hook: a provider calls it with the id of the runtime it is about to start, once the id is
   * chosen (or minted) and before anything runs for it. When it rejects, the provider starts nothing and
   * rethrows. Providers that cannot know the id before starting skip it; their runtime is journaled after create.
   */
  readonly beforeStart?: (runtimeId: string) => Promise<void>;
}

/** Read-only process environment; each factory reads only its own keys. */
export type SandboxFactoryEnv = Readonly<Record<string, string | undefined>>;

/** Tool-sandbox factory a provider package exports as `sandboxFactory`. */
export type SandboxFactory = (
  context: SandboxFactoryContext,
  env: SandboxFactoryEnv,
) => Promise<SandboxPort>;

/** A runtime the managed composition can drive: files, exec, live stdio and lifecycle. */
export type ManagedSandboxRuntime = SandboxPort & SandboxRuntimePort & SandboxDuplexProcessPort;

/** Creates, resumes and restores runtimes of one provider. */
export interface SandboxProviderPort<
  R extends SandboxPort & SandboxRuntimePort = ManagedSandboxRuntime,
> {
  /** Provider id; equals every handle's `provider`. */
  readonly provider: string;
  /** Starts a fresh runtime. */
  create(context: SandboxFactoryContext, env?: SandboxFactoryEnv): Promise<R>;
  /** Reconnects to a retained runtime from a `runtime`-scoped handle. Throws `provider_mismatch` for a foreign handle. */
  resume(
    handle: SandboxCheckpointHandle,
    context: SandboxFactoryContext,
    env?: SandboxFactoryEnv,
  ): Promise<R>;
  /** Starts a new runtime from a `portable` checkpoint. Throws `provider_mismatch` for a foreign handle. */
  restore(
    checkpoint: SandboxCheckpointHandle,
    context: SandboxFactoryContext,
    env?: SandboxFactoryEnv,
  ): Promise<R>;
  /** Reconnects to a runtime by id without changing it; used to reap from a serialized lease. */
  connect(runtimeId: string, context: SandboxFactoryContext, env?: SandboxFactoryEnv): Promise<R>;
}
