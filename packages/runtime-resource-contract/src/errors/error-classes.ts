import { ManagedRuntimeError, type ManagedRuntimeErrorOptions, registerErrorClass } from "./managed-runtime-error.js";

/** `capability_unsupported`: A capability the caller asked for is not offered. */
export class CapabilityUnsupportedError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("capability_unsupported", options);
    this.name = "CapabilityUnsupportedError";
  }
}
registerErrorClass("capability_unsupported", CapabilityUnsupportedError);

/** `capability_drift`: Live ports disagree with the advertised capabilities. */
export class CapabilityDriftError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("capability_drift", options);
    this.name = "CapabilityDriftError";
  }
}
registerErrorClass("capability_drift", CapabilityDriftError);

/** `fence_conflict`: Another owner holds the fence, or the fence is stale. */
export class FenceConflictError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("fence_conflict", options);
    this.name = "FenceConflictError";
  }
}
registerErrorClass("fence_conflict", FenceConflictError);

/** `lease_lost`: The fence or sandbox lease was lost mid-flight. */
export class LeaseLostError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("lease_lost", options);
    this.name = "LeaseLostError";
  }
}
registerErrorClass("lease_lost", LeaseLostError);

/** `invalid_request`: A request, record or argument is malformed. */
export class InvalidRequestError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("invalid_request", options);
    this.name = "InvalidRequestError";
  }
}
registerErrorClass("invalid_request", InvalidRequestError);

/** `invalid_config`: Options or environment configuration are missing or invalid. */
export class InvalidConfigError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("invalid_config", options);
    this.name = "InvalidConfigError";
  }
}
registerErrorClass("invalid_config", InvalidConfigError);

/** `unsupported_operation`: The implementation refuses this operation on purpose. */
export class UnsupportedOperationError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("unsupported_operation", options);
    this.name = "UnsupportedOperationError";
  }
}
registerErrorClass("unsupported_operation", UnsupportedOperationError);

/** `sandbox_failed`: The sandbox failed to start or an operation inside it failed. */
export class SandboxFailedError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("sandbox_failed", options);
    this.name = "SandboxFailedError";
  }
}
registerErrorClass("sandbox_failed", SandboxFailedError);

/** `insufficient_capacity`: The provider is at a capacity limit. */
export class InsufficientCapacityError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("insufficient_capacity", options);
    this.name = "InsufficientCapacityError";
  }
}
registerErrorClass("insufficient_capacity", InsufficientCapacityError);

/** `storage_unwritable`: A store refuses writes (read-only filesystem or bucket, or no write permission). */
export class StorageUnwritableError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("storage_unwritable", options);
    this.name = "StorageUnwritableError";
  }
}
registerErrorClass("storage_unwritable", StorageUnwritableError);

/** `provider_mismatch`: A record, handle or driver names a different provider. */
export class ProviderMismatchError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("provider_mismatch", options);
    this.name = "ProviderMismatchError";
  }
}
registerErrorClass("provider_mismatch", ProviderMismatchError);

/** `driver_load_failed`: A driver module could not be loaded. */
export class DriverLoadFailedError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("driver_load_failed", options);
    this.name = "DriverLoadFailedError";
  }
}
registerErrorClass("driver_load_failed", DriverLoadFailedError);

/** `readiness_failed`: The runtime environment readiness probe failed. */
export class ReadinessFailedError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("readiness_failed", options);
    this.name = "ReadinessFailedError";
  }
}
registerErrorClass("readiness_failed", ReadinessFailedError);

/** `archive_rejected`: An archive was refused as hostile or corrupt. */
export class ArchiveRejectedError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("archive_rejected", options);
    this.name = "ArchiveRejectedError";
  }
}
registerErrorClass("archive_rejected", ArchiveRejectedError);

/** `limit_exceeded`: A configured limit was exceeded. */
export class LimitExceededError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("limit_exceeded", options);
    this.name = "LimitExceededError";
  }
}
registerErrorClass("limit_exceeded", LimitExceededError);

/** `unauthorized`: Authentication or authorization failed. */
export class UnauthorizedError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("unauthorized", options);
    this.name = "UnauthorizedError";
  }
}
registerErrorClass("unauthorized", UnauthorizedError);

/** `upstream_protocol`: An upstream service broke its protocol. */
export class UpstreamProtocolError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("upstream_protocol", options);
    this.name = "UpstreamProtocolError";
  }
}
registerErrorClass("upstream_protocol", UpstreamProtocolError);

/** `not_found`: A named object does not exist. */
export class NotFoundError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("not_found", options);
    this.name = "NotFoundError";
  }
}
registerErrorClass("not_found", NotFoundError);

/** `integrity_failed`: Stored content does not match its promised hash or size. */
export class IntegrityError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("integrity_failed", options);
    this.name = "IntegrityError";
  }
}
registerErrorClass("integrity_failed", IntegrityError);

/** `timeout`: An operation did not finish before its deadline. */
export class TimeoutError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("timeout", options);
    this.name = "TimeoutError";
  }
}
registerErrorClass("timeout", TimeoutError);

/** `aborted`: The caller aborted the operation. */
export class AbortedError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("aborted", options);
    this.name = "AbortedError";
  }
}
registerErrorClass("aborted", AbortedError);

/** `internal`: An unexpected internal failure. */
export class InternalError extends ManagedRuntimeError {
  constructor(options: ManagedRuntimeErrorOptions) {
    super("internal", options);
    this.name = "InternalError";
  }
}
registerErrorClass("internal", InternalError);
