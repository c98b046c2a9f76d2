/**
 * Stable error codes of the managed-runtime seam. A code never changes meaning once published; clients
 * branch on it, log it and carry it across HTTP.
 */
export const ERROR_CODES = [
  /** A capability the caller asked for is not offered by the driver or port. */
  "capability_unsupported",
  /** A driver's live ports disagree with what its descriptor advertised. */
  "capability_drift",
  /** Another owner holds the fence, or a fence operation ran against a stale generation/token. */
  "fence_conflict",
  /** The fence or the sandbox lease was lost while work was in flight. */
  "lease_lost",
  /** A request, record or argument is malformed. */
  "invalid_request",
  /** Factory options or environment configuration are missing or invalid. */
  "invalid_config",
  /** The operation exists in the protocol but this implementation refuses it on purpose. */
  "unsupported_operation",
  /** The sandbox failed to start, crashed, or an operation inside it failed. */
  "sandbox_failed",
  /** The provider is at a capacity limit (instances, memory, vCPU, disk). */
  "insufficient_capacity",
  /**
   * A store refuses writes it should accept: a read-only filesystem or bucket (EROFS) or missing write
   * permission (EACCES, EPERM). Retrying does not help until an operator fixes the store.
   */
  "storage_unwritable",
  /**
   * A service the call depends on (the bridge, the container runtime, a store's database) could not be
   * reached, went away in the middle of the call, or stayed busy past the time allowed; the sandbox and the
   * data are not known to be at fault. A later attempt may succeed; the outcome of a write that failed this
   * way may be unknown.
   */
  "unavailable",
  /** A record, handle or driver names a different provider than the one asked to act on it. */
  "provider_mismatch",
  /** A driver module could not be imported or did not export the expected factory. */
  "driver_load_failed",
  /** The runtime environment readiness probe did not succeed. */
  "readiness_failed",
  /** An archive was refused: hostile names, links escaping the root, unsupported entry types, corrupt data. */
  "archive_rejected",
  /** A configured limit (bytes, entries, files, request size) was exceeded. */
  "limit_exceeded",
  /** Authentication or authorization failed. */
  "unauthorized",
  /** An upstream service answered in a way its protocol does not allow. */
  "upstream_protocol",
  /** A named object (sandbox, blob, process) does not exist. */
  "not_found",
  /** Stored content does not match what its key or record promises (hash or size mismatch). */
  "integrity_failed",
  /** An operation did not finish before its deadline. */
  "timeout",
  /** The operation was aborted by its caller's signal. */
  "aborted",
  /** An unexpected internal failure; the cause carries details. */
  "internal",
] as const;

/** One of {@link ERROR_CODES}. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** True when `value` is a known {@link ErrorCode}. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && (ERROR_CODES as readonly string[]).includes(value);
}

/** HTTP status an error code maps to when it crosses an HTTP boundary. */
export const ERROR_HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  capability_unsupported: 422,
  capability_drift: 422,
  fence_conflict: 409,
  lease_lost: 409,
  invalid_request: 400,
  invalid_config: 500,
  unsupported_operation: 501,
  sandbox_failed: 502,
  insufficient_capacity: 503,
  storage_unwritable: 503,
  unavailable: 503,
  provider_mismatch: 409,
  driver_load_failed: 500,
  readiness_failed: 502,
  archive_rejected: 422,
  limit_exceeded: 413,
  unauthorized: 401,
  upstream_protocol: 502,
  not_found: 404,
  integrity_failed: 409,
  timeout: 504,
  aborted: 499,
  internal: 500,
};
