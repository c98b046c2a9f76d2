/**
 * The part of a `@cloudflare/sandbox` 0.12 stub (what `getSandbox(env.SANDBOX, id)` returns) that the
 * adapter calls. Structural, so this package never loads the SDK at runtime; the workerd tests check that
 * the real stub type is assignable to it.
 */
export interface CloudflareSandboxStub {
  exec(
    command: string,
    options?: { timeout?: number; env?: Record<string, string | undefined>; cwd?: string },
  ): Promise<{ exitCode: number; stdout: string; stderr: string }>;
  startProcess(
    command: string,
    options?: {
      processId?: string;
      env?: Record<string, string | undefined>;
      cwd?: string;
      autoCleanup?: boolean;
    },
  ): Promise<{ readonly id: string; readonly pid?: number }>;
  streamProcessLogs(processId: string): Promise<ReadableStream<Uint8Array>>;
  getProcess(id: string): Promise<{ readonly status: string; readonly exitCode?: number } | null>;
  killProcess(id: string, signal?: string): Promise<void>;
  readFile(
    path: string,
    options?: { encoding?: string },
  ): Promise<{ content: string; encoding?: string }>;
  writeFile(path: string, content: string, options?: { encoding?: string }): Promise<unknown>;
  mkdir(path: string, options?: { recursive?: boolean }): Promise<unknown>;
  createBackup(options: {
    dir: string;
    name?: string;
    ttl?: number;
    localBucket?: boolean;
  }): Promise<{ readonly id: string; readonly dir: string; readonly localBucket?: boolean }>;
  restoreBackup(backup: {
    id: string;
    dir: string;
    localBucket?: boolean;
  }): Promise<{ success: boolean }>;
  mountBucket(
    bucket: string,
    mountPath: string,
    options: {
      endpoint: string;
      prefix?: string;
      provider?: "r2";
      credentialProxy?: boolean;
      readOnly?: boolean;
    },
  ): Promise<void>;
  unmountBucket(mountPath: string): Promise<void>;
  renewActivityTimeout(): void | Promise<void>;
  getState(): Promise<{ status: string }>;
  setOutboundHandler(methodName: string, params?: unknown): Promise<void>;
  destroy(): Promise<void>;
}
