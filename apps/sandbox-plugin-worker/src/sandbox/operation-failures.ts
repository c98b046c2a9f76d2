import {
  InsufficientCapacityError,
  InvalidRequestError,
  LimitExceededError,
  ManagedRuntimeError,
  NotFoundError,
  SandboxFailedError,
} from "@open-managed-agents/runtime-resource-contract";

/** SDK error codes (`SandboxError.code`) by the contract code they map to. */
const CODE_MAP: Readonly<
  Record<string, "not_found" | "invalid_request" | "limit_exceeded" | "insufficient_capacity">
> = {
  FILE_NOT_FOUND: "not_found",
  PROCESS_NOT_FOUND: "not_found",
  IS_DIRECTORY: "invalid_request",
  NOT_DIRECTORY: "invalid_request",
  FILE_EXISTS: "invalid_request",
  PERMISSION_DENIED: "invalid_request",
  VALIDATION_FAILED: "invalid_request",
  INVALID_PATH: "invalid_request",
  READ_ONLY: "invalid_request",
  FILE_TOO_LARGE: "limit_exceeded",
  PAYLOAD_TOO_LARGE: "limit_exceeded",
  NO_SPACE: "limit_exceeded",
  CONTAINER_UNAVAILABLE: "insufficient_capacity",
};
/** Text of errors that lost their code on the way (streamed file errors carry only a message). */
const NOT_FOUND_TEXT = /\bfile not found\b|\bno such file\b/i;
const NOT_A_FILE_TEXT = /\bnot a regular file\b|\bis a directory\b/i;

function describe(error: unknown): { readonly message: string; readonly code: string | undefined } {
  if (typeof error === "object" && error !== null) {
    const record = error as { message?: unknown; code?: unknown };
    return {
      message: typeof record.message === "string" ? record.message : String(error),
      code: typeof record.code === "string" ? record.code : undefined,
    };
  }
  return { message: String(error), code: undefined };
}

/** Maps an error the SDK threw during `operation` to the contract taxonomy; unknown failures are `sandbox_failed`. */
export function classifyOperationFailure(error: unknown, operation: string): ManagedRuntimeError {
  if (ManagedRuntimeError.isInstance(error)) return error;
  const { message, code } = describe(error);
  const context = { operation, ...(code === undefined ? {} : { sdkCode: code }) };
  const mapped = code === undefined ? undefined : CODE_MAP[code];
  const text = `${operation}: ${message}`;
  if (mapped === "not_found" || (mapped === undefined && NOT_FOUND_TEXT.test(message)))
    return new NotFoundError({ message: text, context, cause: error });
  if (mapped === "invalid_request" || (mapped === undefined && NOT_A_FILE_TEXT.test(message)))
    return new InvalidRequestError({ message: text, context, cause: error });
  if (mapped === "limit_exceeded")
    return new LimitExceededError({ message: text, context, cause: error });
  if (mapped === "insufficient_capacity")
    return new InsufficientCapacityError({ message: text, context, cause: error });
  return new SandboxFailedError({
    message: `${operation} failed: ${message}`,
    context,
    cause: error,
  });
}

/** The error for any call on a sandbox whose instance stopped: its files are gone, it is not restarted. */
export function instanceLostError(sandboxId: string): SandboxFailedError {
  return new SandboxFailedError({
    message: `sandbox ${sandboxId} is lost: its instance stopped and its files are gone; delete it and create a new one`,
    context: { sandboxId, state: "stopped", lost: true },
  });
}
