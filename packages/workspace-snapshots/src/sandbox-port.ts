/** What a script run in the sandbox left behind. */
export interface SandboxRunResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The little a snapshot needs of a sandbox: run a shell script, read a file, write a file. Any driver that can
 * exec provides it; paths are absolute paths inside the sandbox.
 */
export interface SnapshotSandbox {
  /** Runs `script` (POSIX sh source) with `args` as its positional parameters; `name` is its `$0`. */
  run(
    name: string,
    script: string,
    args: readonly string[],
    signal?: AbortSignal,
  ): Promise<SandboxRunResult>;
  /** The bytes of a file, streamed. */
  readFile(path: string, signal?: AbortSignal): AsyncIterable<Uint8Array>;
  /**
   * Writes a whole file into a folder the scripts made. The file may be seen before it is complete: readers in
   * the sandbox wait for a hash marker written after it (see receive.sh). No reference to `body` is kept once
   * the returned promise settles: a caller may fill the same buffer again.
   */
  writeFile(path: string, body: Uint8Array, signal?: AbortSignal): Promise<void>;
}
