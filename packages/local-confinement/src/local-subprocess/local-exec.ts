import {
  AbortedError,
  LimitExceededError,
  SandboxFailedError,
  TimeoutError,
} from "@open-managed-agents/runtime-resource-contract";
import type { MappedCommand, MappedProcess } from "../index.js";
import type { SandboxExecResult } from "@open-managed-agents/sandbox";

/** Inputs of {@link execMapped}. */
export interface ExecMappedInput {
  readonly command: string;
  /** Starts the process: in the runtime's confinement, or mapped on the host. */
  readonly spawn: (command: MappedCommand) => MappedProcess;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly maxOutputBytes: number;
  readonly signal?: AbortSignal;
  /** Called with the process once it started, so its owner can kill it on destroy. */
  readonly onStart?: (process: MappedProcess) => void;
}

/**
 * Runs `sh -c command` and collects stdout, stderr and their interleaving. The deadline is enforced
 * here: on expiry the process group is killed and `timeout` is thrown without waiting for stray
 * descendants to close their pipes.
 */
export function execMapped(input: ExecMappedInput): Promise<SandboxExecResult> {
  if (input.signal?.aborted) return Promise.reject(abortedError());
  const mapped = input.spawn({
    command: "sh",
    args: ["-c", input.command],
    cwd: input.cwd,
    env: input.env,
  });
  input.onStart?.(mapped);
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  const combined: Buffer[] = [];
  let totalBytes = 0;

  return new Promise<SandboxExecResult>((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | null, result?: SandboxExecResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      input.signal?.removeEventListener("abort", onAbort);
      if (error) {
        mapped.kill("SIGKILL");
        reject(error);
      } else resolve(result as SandboxExecResult);
    };
    const collect = (target: Buffer[]) => (chunk: Buffer) => {
      totalBytes += chunk.length;
      if (totalBytes > input.maxOutputBytes) {
        finish(
          new LimitExceededError({
            message: `command output exceeded ${input.maxOutputBytes} bytes`,
            context: { maxOutputBytes: input.maxOutputBytes },
          }),
        );
        return;
      }
      target.push(chunk);
      combined.push(chunk);
    };
    const onAbort = (): void => finish(abortedError());
    const timer = setTimeout(
      () =>
        finish(
          new TimeoutError({
            message: `command did not finish within ${input.timeoutMs} ms`,
            context: { timeoutMs: input.timeoutMs },
          }),
        ),
      input.timeoutMs,
    );
    input.signal?.addEventListener("abort", onAbort, { once: true });
    mapped.child.stdout?.on("data", collect(stdout));
    mapped.child.stderr?.on("data", collect(stderr));
    mapped.child.once("error", (error) => {
      finish(
        new SandboxFailedError({
          message: `could not start the command shell: ${error.message}`,
          cause: error,
        }),
      );
    });
    void mapped.exited.then((exit) => {
      if (exit.code === null) {
        finish(
          new SandboxFailedError({
            message: `command was killed by ${exit.signal ?? "a signal"}`,
            context: { signal: exit.signal },
          }),
        );
        return;
      }
      finish(null, {
        exitCode: exit.code,
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr: Buffer.concat(stderr).toString("utf8"),
        output: Buffer.concat(combined).toString("utf8"),
      });
    });
  });
}

function abortedError(): AbortedError {
  return new AbortedError({ message: "command was aborted by its caller" });
}
