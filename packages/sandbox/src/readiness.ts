import {
  ManagedRuntimeError,
  ReadinessFailedError,
  shellQuote,
} from "@open-managed-agents/runtime-resource-contract";
import type { SandboxPort } from "./ports.js";

/** What the readiness probe prints on success; the probe passes only when the output contains it. */
export const RUNTIME_READY_MARKER = "__OPENMA_RUNTIME_READY__";

/** Default deadline of the readiness probe. */
export const DEFAULT_READINESS_TIMEOUT_MS = 10_000;

/** Longest stretch of probe output kept in an error message and context. */
const MAX_REPORTED_OUTPUT = 4_096;

/** Longest version line kept from `<command> --version`. */
const MAX_VERSION_LENGTH = 200;

/** Options of {@link verifyRuntimeEnvironment}. */
export interface VerifyRuntimeEnvironmentOptions {
  /** The harness executable: an absolute path must be executable, any other name must be on `PATH`. */
  readonly command: string;
  /** Deadline of the probe. @default 10_000 */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /**
   * Also run `<command> --version` (no environment of the work item, so no secret) and return the first line
   * it prints as `version`. Only for a harness known to answer `--version` and nothing else (`oma-ama-worker`).
   */
  readonly reportVersion?: boolean;
}

/** Result of a passed probe. */
export interface VerifyRuntimeEnvironmentResult {
  /** Combined output of the probe. */
  readonly output: string;
  /**
   * With `reportVersion`, the first line `--version` printed (printable ASCII, at most 200 characters), or
   * null when it printed none. Absent without `reportVersion`.
   */
  readonly version?: string | null;
}

/** Quotes a value for POSIX `sh` as one word (the contract's rule, re-exported where sandboxes are driven). */
export { shellQuote };

/**
 * The probe command for `command`: `test -x` for absolute paths, `command -v` otherwise. With
 * `reportVersion`, the first line of `<command> --version` follows the marker; its failure fails nothing.
 */
export function readinessProbeCommand(
  command: string,
  options: { readonly reportVersion?: boolean } = {},
): string {
  const check = command.startsWith("/")
    ? `test -x ${shellQuote(command)}`
    : `command -v ${shellQuote(command)}`;
  const probe = `${check} && printf '%s\\n' ${shellQuote(RUNTIME_READY_MARKER)}`;
  return options.reportVersion
    ? `${probe} && { ${shellQuote(command)} --version 2>/dev/null | head -n 1; true; }`
    : probe;
}

/** The first line after the marker line, kept to printable ASCII, or null when there is none. */
function versionAfterMarker(output: string): string | null {
  const after = output
    .slice(output.indexOf(RUNTIME_READY_MARKER) + RUNTIME_READY_MARKER.length)
    .split("\n");
  const line = after
    .map((candidate) => candidate.replace(/[^\x20-\x7e]/g, "").trim())
    .find((candidate) => candidate !== "");
  return line === undefined ? null : line.slice(0, MAX_VERSION_LENGTH);
}

/**
 * Checks that the harness executable exists in the sandbox before a lease is published. Throws
 * `readiness_failed` with the probe's combined output and exit code when the probe fails or does not
 * print {@link RUNTIME_READY_MARKER}; `timeout` and `aborted` errors from `exec` pass through.
 */
export async function verifyRuntimeEnvironment(
  sandbox: SandboxPort,
  options: VerifyRuntimeEnvironmentOptions,
): Promise<VerifyRuntimeEnvironmentResult> {
  if (options.command.trim() === "" || options.command.includes("\0")) {
    throw new ReadinessFailedError({
      message: "readiness probe needs a non-empty harness command",
      context: { command: options.command.replace(/\0/g, "") },
    });
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_READINESS_TIMEOUT_MS;
  let result;
  try {
    result = await sandbox.exec(
      readinessProbeCommand(options.command, { reportVersion: options.reportVersion ?? false }),
      { timeoutMs, ...(options.signal ? { signal: options.signal } : {}) },
    );
  } catch (error) {
    if (ManagedRuntimeError.isInstance(error)) throw error;
    throw new ReadinessFailedError({
      message: `readiness probe for ${options.command} could not run: ${error instanceof Error ? error.message : String(error)}`,
      context: { command: options.command },
      cause: error,
    });
  }
  if (result.exitCode === 0 && result.output.includes(RUNTIME_READY_MARKER)) {
    return options.reportVersion
      ? { output: result.output, version: versionAfterMarker(result.output) }
      : { output: result.output };
  }
  const output =
    result.output.length > MAX_REPORTED_OUTPUT
      ? `${result.output.slice(0, MAX_REPORTED_OUTPUT)}…`
      : result.output;
  const reason =
    result.exitCode === 0
      ? "did not print the readiness marker"
      : `exited with code ${result.exitCode}`;
  throw new ReadinessFailedError({
    message: `readiness probe for ${options.command} ${reason}${notFoundHint(options.command, result.exitCode)}; output: ${output === "" ? "(empty)" : output}`,
    context: { command: options.command, exitCode: result.exitCode, output },
  });
}

/** What a failed lookup means for the operator: where the harness executable must be. */
function notFoundHint(command: string, exitCode: number): string {
  // `command -v` answers 1 for a missing name; a shell that cannot run the probe at all answers 127.
  if (exitCode !== 1 && exitCode !== 127) return "";
  return command.startsWith("/")
    ? ` (${command} is not an executable file in the sandbox)`
    : ` (${command} is not on the runtime's PATH: install it in the sandbox image, e.g. in /usr/local/bin, or put its directory on the PATH the runtime starts processes with)`;
}
