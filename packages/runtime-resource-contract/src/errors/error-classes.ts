import { type ErrorCode, isErrorCode, ERROR_HTTP_STATUS } from "./error-codes.js";
import {
  type ErrorContext,
  type ErrorContextValue,
  sanitizeErrorContext,
} from "./error-context.js";
import type { ManagedRuntimeErrorJSON, ManagedRuntimeErrorOptions } from "./error-wire.js";

// The base class, one class per code and the code -> class table share this module: `fromJSON` needs the
// table, the table needs the classes and the classes need the base, and ES modules cannot split that cycle.

const MARKER = Symbol.for("open-managed-agents.runtime-error");

/**
 * Base class of every error this project throws on purpose. Each carries a stable {@link ErrorCode},
 * a safe context and an optional cause. Use {@link ManagedRuntimeError.isInstance},
 * {@link ManagedRuntimeError.hasCode} or a subclass's own `isInstance` rather than `instanceof`: they hold
 * across duplicate installs of this package.
 */
export class ManagedRuntimeError extends Error {
  /** Stable machine-readable code. */
  readonly code: ErrorCode;
  /** Safe details; never contains secrets. */
  readonly context: Readonly<Record<string, ErrorContextValue>>;

  constructor(code: ErrorCode, options: ManagedRuntimeErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ManagedRuntimeError";
    this.code = code;
    this.context = Object.freeze(sanitizeErrorContext(options.context));
    // A property rather than a class field keeps the marker out of the declared type, which the
    // per-code classes (built by a function) could not otherwise export.
    Object.defineProperty(this, MARKER, { value: true });
  }

  /** HTTP status this error maps to. */
  get httpStatus(): number {
    return ERROR_HTTP_STATUS[this.code];
  }

  /** True for any error built by this package, whichever copy of it is installed, whatever its code. */
  static isInstance(error: unknown): error is ManagedRuntimeError {
    return (
      typeof error === "object" &&
      error !== null &&
      (error as Record<symbol, unknown>)[MARKER] === true
    );
  }

  /** True when `error` is a {@link ManagedRuntimeError} with the given code. */
  static hasCode(error: unknown, code: ErrorCode): error is ManagedRuntimeError {
    return ManagedRuntimeError.isInstance(error) && error.code === code;
  }

  /** The wire form: `{code, message, context}`. */
  toJSON(): ManagedRuntimeErrorJSON {
    return Object.keys(this.context).length === 0
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, context: this.context };
  }

  /**
   * Rebuilds a typed error, of the class for its code, from its wire form. An unknown or missing code
   * becomes `upstream_protocol`, so a peer that speaks a newer taxonomy still yields a typed error.
   */
  static fromJSON(json: unknown): ManagedRuntimeError {
    const record =
      typeof json === "object" && json !== null ? (json as Record<string, unknown>) : {};
    const message = typeof record.message === "string" ? record.message : "error without a message";
    const context = sanitizeErrorContext(record.context) as ErrorContext;
    if (!isErrorCode(record.code)) {
      return createError("upstream_protocol", {
        message: `peer sent an error with an unknown code: ${message}`,
        context: { ...context, peerCode: typeof record.code === "string" ? record.code : null },
      });
    }
    return createError(record.code, { message, context });
  }
}

/** A {@link ManagedRuntimeError} whose code is `C`: what a per-code class's `isInstance` narrows to. */
export type ManagedRuntimeErrorWithCode<C extends ErrorCode> = ManagedRuntimeError & {
  readonly code: C;
};

/**
 * The base of the one class for `code`: fixes the code (as a literal type too) and the name, and gives the
 * class an `isInstance` that checks that code, so `SandboxFailedError.isInstance(timeout)` is false.
 */
function codedErrorClass<C extends ErrorCode>(code: C, name: string) {
  return class CodedManagedRuntimeError extends ManagedRuntimeError {
    declare readonly code: C;

    constructor(options: ManagedRuntimeErrorOptions) {
      super(code, options);
      this.name = name;
    }

    /** True only for an error of this class's code, whichever copy of the package built it. */
    static override isInstance(error: unknown): error is ManagedRuntimeErrorWithCode<C> {
      return ManagedRuntimeError.hasCode(error, code);
    }
  };
}

/** `capability_unsupported`: A capability the caller asked for is not offered. */
export class CapabilityUnsupportedError extends codedErrorClass(
  "capability_unsupported",
  "CapabilityUnsupportedError",
) {}

/** `capability_drift`: Live ports disagree with the advertised capabilities. */
export class CapabilityDriftError extends codedErrorClass(
  "capability_drift",
  "CapabilityDriftError",
) {}

/** `fence_conflict`: Another owner holds the fence, or the fence is stale. */
export class FenceConflictError extends codedErrorClass("fence_conflict", "FenceConflictError") {}

/** `lease_lost`: The fence or sandbox lease was lost mid-flight. */
export class LeaseLostError extends codedErrorClass("lease_lost", "LeaseLostError") {}

/** `invalid_request`: A request, record or argument is malformed. */
export class InvalidRequestError extends codedErrorClass(
  "invalid_request",
  "InvalidRequestError",
) {}

/** `invalid_config`: Options or environment configuration are missing or invalid. */
export class InvalidConfigError extends codedErrorClass("invalid_config", "InvalidConfigError") {}

/** `unsupported_operation`: The implementation refuses this operation on purpose. */
export class UnsupportedOperationError extends codedErrorClass(
  "unsupported_operation",
  "UnsupportedOperationError",
) {}

/** `sandbox_failed`: The sandbox failed to start or an operation inside it failed. */
export class SandboxFailedError extends codedErrorClass("sandbox_failed", "SandboxFailedError") {}

/** `insufficient_capacity`: The provider is at a capacity limit. */
export class InsufficientCapacityError extends codedErrorClass(
  "insufficient_capacity",
  "InsufficientCapacityError",
) {}

/** `storage_unwritable`: A store refuses writes (read-only filesystem or bucket, or no write permission). */
export class StorageUnwritableError extends codedErrorClass(
  "storage_unwritable",
  "StorageUnwritableError",
) {}

/** `unavailable`: A service the call depends on could not be reached, went away mid-call or stayed busy. */
export class UnavailableError extends codedErrorClass("unavailable", "UnavailableError") {}

/** `provider_mismatch`: A record, handle or driver names a different provider. */
export class ProviderMismatchError extends codedErrorClass(
  "provider_mismatch",
  "ProviderMismatchError",
) {}

/** `driver_load_failed`: A driver module could not be loaded. */
export class DriverLoadFailedError extends codedErrorClass(
  "driver_load_failed",
  "DriverLoadFailedError",
) {}

/** `readiness_failed`: The runtime environment readiness probe failed. */
export class ReadinessFailedError extends codedErrorClass(
  "readiness_failed",
  "ReadinessFailedError",
) {}

/** `archive_rejected`: An archive was refused as hostile or corrupt. */
export class ArchiveRejectedError extends codedErrorClass(
  "archive_rejected",
  "ArchiveRejectedError",
) {}

/** `limit_exceeded`: A configured limit was exceeded. */
export class LimitExceededError extends codedErrorClass("limit_exceeded", "LimitExceededError") {}

/** `unauthorized`: Authentication or authorization failed. */
export class UnauthorizedError extends codedErrorClass("unauthorized", "UnauthorizedError") {}

/** `upstream_protocol`: An upstream service broke its protocol. */
export class UpstreamProtocolError extends codedErrorClass(
  "upstream_protocol",
  "UpstreamProtocolError",
) {}

/** `not_found`: A named object does not exist. */
export class NotFoundError extends codedErrorClass("not_found", "NotFoundError") {}

/** `integrity_failed`: Stored content does not match its promised hash or size. */
export class IntegrityError extends codedErrorClass("integrity_failed", "IntegrityError") {}

/** `timeout`: An operation did not finish before its deadline. */
export class TimeoutError extends codedErrorClass("timeout", "TimeoutError") {}

/** `aborted`: The caller aborted the operation. */
export class AbortedError extends codedErrorClass("aborted", "AbortedError") {}

/** `internal`: An unexpected internal failure. */
export class InternalError extends codedErrorClass("internal", "InternalError") {}

/** The class of each code: what {@link createError} and {@link ManagedRuntimeError.fromJSON} build. */
export const ERROR_CLASSES = {
  capability_unsupported: CapabilityUnsupportedError,
  capability_drift: CapabilityDriftError,
  fence_conflict: FenceConflictError,
  lease_lost: LeaseLostError,
  invalid_request: InvalidRequestError,
  invalid_config: InvalidConfigError,
  unsupported_operation: UnsupportedOperationError,
  sandbox_failed: SandboxFailedError,
  insufficient_capacity: InsufficientCapacityError,
  storage_unwritable: StorageUnwritableError,
  unavailable: UnavailableError,
  provider_mismatch: ProviderMismatchError,
  driver_load_failed: DriverLoadFailedError,
  readiness_failed: ReadinessFailedError,
  archive_rejected: ArchiveRejectedError,
  limit_exceeded: LimitExceededError,
  unauthorized: UnauthorizedError,
  upstream_protocol: UpstreamProtocolError,
  not_found: NotFoundError,
  integrity_failed: IntegrityError,
  timeout: TimeoutError,
  aborted: AbortedError,
  internal: InternalError,
} as const satisfies {
  readonly [C in ErrorCode]: new (
    options: ManagedRuntimeErrorOptions,
  ) => ManagedRuntimeErrorWithCode<C>;
};

/** The error class {@link createError} builds for `code`. */
export type ErrorForCode<C extends ErrorCode> = InstanceType<(typeof ERROR_CLASSES)[C]>;

/** Builds the error of the class for `code`. */
export function createError<C extends ErrorCode>(
  code: C,
  options: ManagedRuntimeErrorOptions,
): ErrorForCode<C> {
  const errorClass: new (options: ManagedRuntimeErrorOptions) => ManagedRuntimeError =
    ERROR_CLASSES[code];
  return new errorClass(options) as ErrorForCode<C>;
}
