import { AbortedError } from "@open-managed-agents/runtime-resource-contract";

/** Throws `aborted` naming the operation when the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined, operation: string): void {
  if (signal?.aborted)
    throw new AbortedError({
      message: `${operation} aborted by the caller's signal`,
      context: { operation },
    });
}
