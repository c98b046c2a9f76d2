import {
  InsufficientCapacityError,
  InternalError,
  ManagedRuntimeError,
  StorageUnwritableError,
} from "@open-managed-agents/runtime-resource-contract";

/** Which store call failed, for the message and context of a wrapped error. */
export interface BlobOperation {
  readonly store: string;
  readonly operation: string;
  readonly key?: string;
}

/** System error codes of a store that refuses writes, with the words the message names them by. */
const UNWRITABLE: Readonly<Record<string, string>> = {
  EROFS: "read-only file system",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
};
/** System error codes of a full store. */
const FULL: Readonly<Record<string, string>> = {
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
};

/**
 * Runs a store call and lets typed errors through. A read-only or permission-refused store becomes
 * `storage_unwritable` and a full one `insufficient_capacity`, each naming the system error code; any other
 * failure becomes `internal`. Every wrapped error names the call and keeps the original as its cause.
 */
export async function guardOperation<T>(
  operation: BlobOperation,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (ManagedRuntimeError.isInstance(error)) throw error;
    throw storeFailure(operation, error);
  }
}

function storeFailure(operation: BlobOperation, error: unknown): ManagedRuntimeError {
  const detail = error instanceof Error ? error.message.slice(0, 300) : String(error).slice(0, 300);
  const errno = systemCode(error);
  const prefix = `${operation.store} blob store ${operation.operation} failed`;
  const context = {
    store: operation.store,
    operation: operation.operation,
    key: operation.key,
    ...(errno ? { errno } : {}),
  };
  if (errno && UNWRITABLE[errno])
    return new StorageUnwritableError({
      message: `${prefix}: ${UNWRITABLE[errno]} (${errno}): ${detail}`,
      context,
      cause: error,
    });
  if (errno && FULL[errno])
    return new InsufficientCapacityError({
      message: `${prefix}: ${FULL[errno]} (${errno}): ${detail}`,
      context,
      cause: error,
    });
  return new InternalError({ message: `${prefix}: ${detail}`, context, cause: error });
}

function systemCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}
