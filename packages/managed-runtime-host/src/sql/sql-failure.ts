import { InternalError, ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";

/**
 * Wraps a database driver failure as `internal`. Driver messages name tables and constraints, never
 * bound values, so they are safe to carry.
 */
export function sqlFailure(error: unknown): ManagedRuntimeError {
  if (ManagedRuntimeError.isInstance(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new InternalError({ message: `SQL statement failed: ${message}`, cause: error });
}
