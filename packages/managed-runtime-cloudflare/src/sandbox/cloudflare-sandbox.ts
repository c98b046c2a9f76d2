/**
 * The driver's narrow view of one Cloudflare sandbox. Everything the driver does to a container goes
 * through this interface; the SDK adapter (`@open-managed-agents/managed-runtime-cloudflare/sdk`) maps it
 * onto a `@cloudflare/sandbox` 0.12 stub, and a port to SDK 1.0 replaces only that adapter.
 *
 * Implementations throw typed contract errors: `not_found` for a missing file or process, `timeout`,
 * `unavailable` when the connection to the container runtime was lost mid-call, `sandbox_failed` for
 * anything else the platform reports, never a raw SDK error.
 */
export interface CloudflareSandbox {
  /** Runs `command` through `sh -c` in a fresh shell; a non-zero exit is a result. */
  exec(command: string, options: CloudflareExecOptions): Promise<CloudflareExecResult>;
  /** Starts a background process; its output is read with {@link processLogs}. */
  startProcess(command: string, options?: CloudflareProcessOptions): Promise<CloudflareProcessInfo>;
  /** Output of a process from its start, then live, ending with its exit. Consumable once per call. */
  processLogs(processId: string, signal: AbortSignal): AsyncIterable<CloudflareProcessLogEvent>;
  /** Status of a process; null when the container does not know it. */
  processStatus(processId: string): Promise<CloudflareProcessState | null>;
  /** Sends a signal to a process; a process that already ended is success. */
  killProcess(processId: string, signal: "SIGTERM" | "SIGKILL"): Promise<void>;
  /** Reads a file's bytes. Throws `not_found` when it does not exist. */
  readFile(path: string): Promise<Uint8Array>;
  /** Writes bytes, creating parent directories. */
  writeFile(path: string, content: Uint8Array): Promise<void>;
  /** Archives a directory to the platform's backup bucket. */
  createBackup(input: {
    readonly dir: string;
    readonly name?: string;
    readonly ttlSec: number;
  }): Promise<CloudflareBackupHandle>;
  /** Applies a backup to its directory. On the platform this is an overlay that is lost when the container sleeps. */
  restoreBackup(handle: CloudflareBackupHandle): Promise<void>;
  /** Mounts a bucket through the platform's credential proxy: no credential enters the container. */
  mountBucket(input: CloudflareBucketMount): Promise<void>;
  /** Unmounts a path; a path that is not mounted is success. */
  unmountBucket(mountPath: string): Promise<void>;
  /** Resets the container's `sleepAfter` timer. */
  renewActivityTimeout(): Promise<void>;
  /** Container state read from the Durable Object's storage; never starts the container. */
  containerState(): Promise<CloudflareContainerState>;
  /** Selects the outbound handler the Worker applies to the container's HTTP and HTTPS traffic. */
  setOutboundHandler(handler: string, params: Readonly<Record<string, unknown>>): Promise<void>;
  /** Stops and deletes the container. Idempotent. */
  destroy(): Promise<void>;
}

/** Options of {@link CloudflareSandbox.exec}. */
export interface CloudflareExecOptions {
  /** Deadline; the adapter enforces it itself and throws `timeout`. */
  readonly timeoutMs: number;
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

/** A finished command. */
export interface CloudflareExecResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Options of {@link CloudflareSandbox.startProcess}. */
export interface CloudflareProcessOptions {
  readonly processId?: string;
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
}

/** A started process. */
export interface CloudflareProcessInfo {
  readonly id: string;
  readonly pid: number | null;
}

/** One event of a process's output. */
export type CloudflareProcessLogEvent =
  | { readonly type: "stdout" | "stderr"; readonly data: string }
  | { readonly type: "exit"; readonly exitCode: number | null };

/** What the container reports about a process. */
export interface CloudflareProcessState {
  readonly status: "starting" | "running" | "completed" | "failed" | "killed" | "error";
  readonly exitCode: number | null;
}

/** A backup the platform stored; JSON-safe and free of secrets. */
export interface CloudflareBackupHandle {
  readonly id: string;
  readonly dir: string;
  /** Set by local development backups, which live in the bound bucket instead of presigned R2 objects. */
  readonly localBucket?: boolean;
}

/** A bucket mount through the Durable Object's credential proxy. */
export interface CloudflareBucketMount {
  readonly bucket: string;
  readonly mountPath: string;
  /** S3 endpoint of the bucket (R2: `https://<account>.r2.cloudflarestorage.com`). */
  readonly endpoint: string;
  /** Key prefix inside the bucket, starting and ending with `/`. */
  readonly prefix: string;
  /** Mount read-only: the filesystem refuses writes. @default false */
  readonly readOnly?: boolean;
}

/**
 * `running`/`healthy`: the container runs. `stopped`/`stopped_with_code`: it is gone (slept, exited or
 * destroyed) and the next call would start a fresh one. `stopping`: on its way out.
 */
export type CloudflareContainerState =
  | "running"
  | "healthy"
  | "stopping"
  | "stopped"
  | "stopped_with_code";
