import {
  InsufficientCapacityError,
  InternalError,
  ManagedRuntimeError,
  StorageUnwritableError,
  UnavailableError,
} from "@open-managed-agents/runtime-resource-contract";

/**
 * SQLite result codes (better-sqlite3's `code`, extended codes included) of a database another connection
 * holds locked: the statement did not run, so it may run again once the lock is released.
 */
const BUSY = /^SQLITE_(BUSY|LOCKED)(_|$)/;
const READ_ONLY = /^SQLITE_READONLY(_|$)/;
const FULL = /^SQLITE_FULL$/;

/**
 * Wraps a database driver failure. A database locked by another connection past the busy timeout is
 * `unavailable` with `context.busy` (nothing was written: the caller may retry), a read-only one
 * `storage_unwritable`, a full one `insufficient_capacity`; anything else `internal`. Driver messages
 * name tables and constraints, never bound values, so they are safe to carry.
 */
export function sqlFailure(error: unknown): ManagedRuntimeError {
  if (ManagedRuntimeError.isInstance(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  const sqliteCode = typeof code === "string" ? code : "";
  if (BUSY.test(sqliteCode)) {
    return new UnavailableError({
      message: `the SQL store is busy: another connection holds its lock past the busy timeout (${sqliteCode}: ${message})`,
      context: { sqliteCode, busy: true },
      cause: error,
    });
  }
  if (READ_ONLY.test(sqliteCode)) {
    return new StorageUnwritableError({
      message: `the SQL store refuses writes (${sqliteCode}: ${message})`,
      context: { sqliteCode },
      cause: error,
    });
  }
  if (FULL.test(sqliteCode)) {
    return new InsufficientCapacityError({
      message: `the SQL store is full (${sqliteCode}: ${message})`,
      context: { sqliteCode },
      cause: error,
    });
  }
  return new InternalError({ message: `SQL statement failed: ${message}`, cause: error });
}
