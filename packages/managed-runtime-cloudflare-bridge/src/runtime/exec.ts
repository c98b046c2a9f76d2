import { LimitExceededError, TimeoutError } from "@open-managed-agents/runtime-resource-contract";
import type { SandboxExecResult } from "@open-managed-agents/sandbox";
import type { BridgeClient, BridgeExecEvent } from "../wire/bridge-client.js";
import { ENV_FILE_LAUNCHER } from "./env-file.js";

/** Exit code of GNU `timeout` when the deadline passed. */
const TIMEOUT_EXIT_CODE = 124;
/** Extra time the client waits beyond the in-sandbox deadline before it gives up itself. */
const CLIENT_GRACE_MS = 5_000;

/** What to run and how. */
export interface BridgeCommand {
  readonly command: string;
  readonly args?: readonly string[];
  /** Sandbox path of an env file from `stageEnvFile`; its variables become the process environment. */
  readonly envFile?: string;
  readonly cwd?: string;
  readonly timeoutMs?: number;
}

/**
 * Builds the argv sent to the bridge. The bridge ignores per-call env and may ignore `timeout_ms`, so
 * the env comes from an env file the launcher sources and deletes (values never enter argv, which `ps`
 * shows), and the deadline from `timeout` inside the sandbox.
 */
export function buildArgv(input: BridgeCommand): string[] {
  const program = [input.command, ...(input.args ?? [])];
  const withEnv = input.envFile
    ? ["sh", "-c", ENV_FILE_LAUNCHER, input.envFile, ...program]
    : program;
  if (!input.timeoutMs) return withEnv;
  const seconds = Math.max(1, Math.ceil(input.timeoutMs / 1000));
  return ["timeout", "-k", "2", String(seconds), ...withEnv];
}

/** Combines the caller's signal with a client-side deadline. */
export function deadlineSignal(
  timeoutMs: number | undefined,
  signal: AbortSignal | undefined,
): AbortSignal | undefined {
  const signals = [
    signal,
    timeoutMs ? AbortSignal.timeout(timeoutMs + CLIENT_GRACE_MS) : undefined,
  ].filter((candidate): candidate is AbortSignal => candidate !== undefined);
  return signals.length === 0 ? undefined : AbortSignal.any(signals);
}

/** Runs a command to completion, keeping at most `maxOutputBytes` of output. */
export async function execCollect(
  client: BridgeClient,
  sandboxId: string,
  input: BridgeCommand & {
    readonly signal?: AbortSignal;
    readonly maxOutputBytes: number;
    readonly retryUnreachable?: boolean;
  },
): Promise<SandboxExecResult> {
  const decoders = {
    stdout: new TextDecoder(),
    stderr: new TextDecoder(),
    output: new TextDecoder(),
  };
  let stdout = "";
  let stderr = "";
  let output = "";
  let size = 0;
  const signal = deadlineSignal(input.timeoutMs, input.signal);
  let exitCode: number | null = null;
  try {
    for await (const event of client.exec(sandboxId, {
      argv: buildArgv(input),
      cwd: input.cwd,
      timeoutMs: input.timeoutMs,
      signal,
      retryUnreachable: input.retryUnreachable,
    })) {
      if (event.type === "exit") {
        exitCode = event.exitCode;
        break;
      }
      size += event.data.byteLength;
      if (size > input.maxOutputBytes) {
        throw new LimitExceededError({
          message: `command output exceeds ${input.maxOutputBytes} bytes`,
          context: { limit: "maxOutputBytes" },
        });
      }
      const text = decoders[event.type].decode(event.data, { stream: true });
      if (event.type === "stdout") stdout += text;
      else stderr += text;
      output += decoders.output.decode(event.data, { stream: true });
    }
  } catch (error) {
    if (input.timeoutMs && signal?.aborted && !input.signal?.aborted) {
      throw new TimeoutError({
        message: `command did not finish within ${input.timeoutMs} ms`,
        context: { timeoutMs: input.timeoutMs },
        cause: error,
      });
    }
    throw error;
  }
  if (input.timeoutMs && exitCode === TIMEOUT_EXIT_CODE) {
    throw new TimeoutError({
      message: `command did not finish within ${input.timeoutMs} ms`,
      context: { timeoutMs: input.timeoutMs },
    });
  }
  return { exitCode: exitCode ?? -1, stdout, stderr, output };
}

/** Splits an exec event stream into stdout and stderr byte streams plus the exit code. */
export function demultiplex(events: AsyncGenerator<BridgeExecEvent>) {
  let stdoutController!: ReadableStreamDefaultController<Uint8Array>;
  let stderrController!: ReadableStreamDefaultController<Uint8Array>;
  const stdout = new ReadableStream<Uint8Array>({
    start: (controller) => void (stdoutController = controller),
  });
  const stderr = new ReadableStream<Uint8Array>({
    start: (controller) => void (stderrController = controller),
  });
  const exitCode = (async (): Promise<number | null> => {
    try {
      for await (const event of events) {
        if (event.type === "exit") {
          stdoutController.close();
          stderrController.close();
          return event.exitCode;
        }
        (event.type === "stdout" ? stdoutController : stderrController).enqueue(event.data);
      }
      throw new Error("exec events ended without exit");
    } catch (error) {
      stdoutController.error(error);
      stderrController.error(error);
      throw error;
    }
  })();
  return { stdout, stderr, exitCode };
}
