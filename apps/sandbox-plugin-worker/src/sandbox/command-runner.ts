import type { ExecEvent, ExecResult, StreamOptions } from "@cloudflare/sandbox";
import { parseSSEStream } from "@cloudflare/sandbox";
import type { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { ndjsonStream } from "../protocol/ndjson.js";
import type { ExecRequest, ExecResponse } from "../protocol/schemas.js";
import { SESSIONLESS, TIMEOUT_EXIT_CODE, commandLine } from "./command-line.js";

/** The SDK calls commands need: sessionless exec, buffered and streamed. */
export interface CommandHost {
  execWithSessionToken(
    command: string,
    sessionId: string,
    options?: { env?: Record<string, string>; cwd?: string },
  ): Promise<ExecResult>;
  execStreamWithSessionToken(
    command: string,
    sessionId: string,
    options?: StreamOptions,
  ): Promise<ReadableStream<Uint8Array>>;
}

function executionOptions(request: ExecRequest): { env?: Record<string, string>; cwd?: string } {
  return {
    ...(request.env === undefined ? {} : { env: { ...request.env } }),
    ...(request.cwd === undefined ? {} : { cwd: request.cwd }),
  };
}

/** Runs a command to completion and answers its exit code and output. */
export async function runBuffered(host: CommandHost, request: ExecRequest): Promise<ExecResponse> {
  const started = Date.now();
  const result = await host.execWithSessionToken(
    commandLine(request),
    SESSIONLESS,
    executionOptions(request),
  );
  return {
    exitCode: result.exitCode,
    stdout: result.stdout,
    stderr: result.stderr,
    timedOut: request.timeoutMs !== undefined && result.exitCode === TIMEOUT_EXIT_CODE,
    durationMs: Date.now() - started,
  };
}

/** Starts a command and answers its output as NDJSON lines of stdout, stderr and a final exit. */
export async function runStreaming(
  host: CommandHost,
  request: ExecRequest,
  mapError: (error: unknown) => ManagedRuntimeError,
): Promise<ReadableStream<Uint8Array>> {
  const sse = await host.execStreamWithSessionToken(
    commandLine(request),
    SESSIONLESS,
    executionOptions(request),
  );
  return ndjsonStream(parseSSEStream<ExecEvent>(sse), {
    timeoutGiven: request.timeoutMs !== undefined,
    mapError,
  });
}
