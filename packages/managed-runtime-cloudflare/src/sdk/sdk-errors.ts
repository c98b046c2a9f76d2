import {
  InvalidConfigError,
  ManagedRuntimeError,
  NotFoundError,
  SandboxFailedError,
  TimeoutError,
  UnavailableError,
} from "@open-managed-agents/runtime-resource-contract";

/** SDK error codes (they survive Durable Object RPC inside the message or as `code`) that mean "missing". */
const NOT_FOUND_CODES = ["FILE_NOT_FOUND", "PROCESS_NOT_FOUND", "BACKUP_NOT_FOUND"];
const NOT_FOUND_MESSAGE = /\b(file|process|backup) not found\b|no such file/i;
const TIMEOUT_MESSAGE = /\btimed out\b|\btimeout\b/i;
/** SDK codes and class names that mean the deployment is misconfigured (bindings, credentials, mount options). */
const CONFIG_CODES = ["INVALID_BACKUP_CONFIG", "MISSING_CREDENTIALS", "INVALID_MOUNT_CONFIG"];
const CONFIG_NAMES =
  /\b(InvalidBackupConfigError|MissingCredentialsError|InvalidMountConfigError)\b/;
/**
 * SDK codes, class names and messages of a call cut off because the connection to the container runtime was
 * lost. The SDK reports any lost connection ("Network connection lost") as "interrupted while the platform was
 * updating the sandbox runtime", also when the runtime simply died; the contract error says what is known.
 */
const INTERRUPTED_CODES = ["OPERATION_INTERRUPTED", "CONTAINER_UNAVAILABLE"];
const INTERRUPTED_NAMES = /\b(OperationInterruptedError|ContainerUnavailableError)\b/;
const INTERRUPTED_MESSAGE =
  /was interrupted while the platform was updating the sandbox runtime|network connection lost/i;

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

/** True when an SDK error says the file, process or backup does not exist. */
export function isSdkNotFound(error: unknown): boolean {
  const { message, code } = describe(error);
  return (
    (code !== undefined && NOT_FOUND_CODES.includes(code)) ||
    NOT_FOUND_CODES.some((entry) => message.includes(entry)) ||
    NOT_FOUND_MESSAGE.test(message)
  );
}

/**
 * Maps an error thrown by the SDK (often flattened to `name` and `message` by Durable Object RPC) to
 * the contract taxonomy: `not_found`, `invalid_config`, `unavailable` (the runtime connection was lost),
 * `timeout`, or `sandbox_failed` with the SDK's message and the cause.
 */
export function sdkFailure(error: unknown, operation: string): ManagedRuntimeError {
  if (ManagedRuntimeError.isInstance(error)) return error;
  const { message, code } = describe(error);
  const context = { operation, ...(code ? { sdkCode: code } : {}) };
  if (isSdkNotFound(error))
    return new NotFoundError({ message: `${operation}: ${message}`, context, cause: error });
  const name =
    typeof error === "object" && error !== null
      ? String((error as { name?: unknown }).name ?? "")
      : "";
  if (
    (code !== undefined && CONFIG_CODES.includes(code)) ||
    CONFIG_NAMES.test(name) ||
    CONFIG_NAMES.test(message)
  ) {
    return new InvalidConfigError({ message: `${operation}: ${message}`, context, cause: error });
  }
  if (
    (code !== undefined && INTERRUPTED_CODES.includes(code)) ||
    INTERRUPTED_NAMES.test(name) ||
    INTERRUPTED_MESSAGE.test(message)
  ) {
    return new UnavailableError({
      message: `${operation} failed: the connection to the sandbox's container runtime was lost mid-call (the runtime stopped, crashed or was replaced); the call's effect is unknown`,
      context: { ...context, interrupted: true },
      cause: error,
    });
  }
  if (
    code === "COMMAND_TIMEOUT" ||
    (code === undefined && TIMEOUT_MESSAGE.test(message) && operation === "exec")
  ) {
    return new TimeoutError({ message: `${operation}: ${message}`, context, cause: error });
  }
  return new SandboxFailedError({
    message: `${operation} failed: ${message}`,
    context,
    cause: error,
  });
}

/** Runs an SDK call, mapping what it throws with {@link sdkFailure}. */
export async function callSdk<T>(operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw sdkFailure(error, operation);
  }
}
