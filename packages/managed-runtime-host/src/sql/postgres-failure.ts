import {
  InternalError,
  ManagedRuntimeError,
  StorageUnwritableError,
  TimeoutError,
  UnauthorizedError,
  UnavailableError,
} from "@open-managed-agents/runtime-resource-contract";

// SQLSTATE classes and codes (Postgres "Appendix A. Error Codes") that say the server cannot take the work now.
const UNAVAILABLE_STATES = new Set(["57P01", "57P02", "57P03", "53000", "53200", "53300", "53400"]);
// The server refuses the write itself: a read-only transaction, database or standby; a full disk; no privilege.
const UNWRITABLE_STATES = new Set(["25006", "53100", "42501"]);
// Socket errors of a server that is down, restarting or unreachable.
const UNREACHABLE_ERRNOS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "ENOENT",
]);
// Failures that came before any statement reached a server that could run it (no connection was made, the server
// is starting up, or refused the write): nothing was written, so a caller holding a fence may ask again.
const NOTHING_WRITTEN_STATES = new Set([
  "57P03",
  "25006",
  "ECONNREFUSED",
  "ENOENT",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
const NOTHING_WRITTEN_MESSAGE = /timeout exceeded when trying to connect/i;
// node-postgres reports a lost or never-made connection without a code, in these words.
const UNREACHABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|not queryable|Cannot use a pool after calling end/i;

/**
 * Wraps a node-postgres failure in the typed error a caller can act on: `unavailable` when the server cannot be
 * reached or is not accepting work (retry later; a write's outcome may be unknown), `storage_unwritable` when it
 * refuses writes, `timeout` when the statement timeout cancelled it, `unauthorized` when authentication failed,
 * and `internal` for the rest (constraint violations, syntax). Server messages name tables and constraints,
 * never bound values, so they are safe to carry. `context.busy` says nothing was written (no connection, a server
 * starting up, a read-only refusal): the host asks again while its fence lasts, as for a locked SQLite file. A
 * connection lost mid-statement is not busy: whether that write landed is unknown.
 */
export function postgresFailure(error: unknown): ManagedRuntimeError {
  if (ManagedRuntimeError.isInstance(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code =
    typeof (error as { code?: unknown })?.code === "string"
      ? (error as { code: string }).code
      : undefined;
  const nothingWritten =
    code === undefined ? NOTHING_WRITTEN_MESSAGE.test(message) : NOTHING_WRITTEN_STATES.has(code);
  const context = {
    ...(code === undefined ? {} : { code }),
    ...(nothingWritten ? { busy: true } : {}),
  };
  if (
    code !== undefined &&
    (UNAVAILABLE_STATES.has(code) || code.startsWith("08") || UNREACHABLE_ERRNOS.has(code))
  ) {
    return new UnavailableError({
      message: `Postgres is unavailable: ${message}`,
      context,
      cause: error,
    });
  }
  if (code === undefined && UNREACHABLE_MESSAGE.test(message)) {
    return new UnavailableError({
      message: `Postgres is unavailable: ${message}`,
      context,
      cause: error,
    });
  }
  if (code !== undefined && UNWRITABLE_STATES.has(code)) {
    return new StorageUnwritableError({
      message: `Postgres refused the write: ${message}`,
      context,
      cause: error,
    });
  }
  if (code === "57014") {
    return new TimeoutError({
      message: `Postgres cancelled the statement: ${message}`,
      context,
      cause: error,
    });
  }
  if (code === "28000" || code === "28P01") {
    return new UnauthorizedError({
      message: `Postgres refused the login: ${message}`,
      context,
      cause: error,
    });
  }
  return new InternalError({ message: `SQL statement failed: ${message}`, context, cause: error });
}
