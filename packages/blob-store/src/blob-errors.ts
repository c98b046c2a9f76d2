import { InternalError, ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";

/** Which store call failed, for the message and context of a wrapped error. */
export interface BlobOperation {
  readonly store: string;
  readonly operation: string;
  readonly key?: string;
}

/**
 * Runs a store call and lets typed errors through; any other failure (a filesystem or binding
 * error) becomes an `internal` error that names the call and keeps the original as its cause.
 */
export async function guardOperation<T>(operation: BlobOperation, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (ManagedRuntimeError.isInstance(error)) throw error;
    const detail = error instanceof Error ? error.message.slice(0, 300) : String(error).slice(0, 300);
    throw new InternalError({
      message: `${operation.store} blob store ${operation.operation} failed: ${detail}`,
      context: { store: operation.store, operation: operation.operation, key: operation.key },
      cause: error,
    });
  }
}
