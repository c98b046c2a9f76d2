import { type ErrorCode, isErrorCode, ERROR_HTTP_STATUS } from "./error-codes.js";
import { type ErrorContext, type ErrorContextValue, sanitizeErrorContext } from "./error-context.js";

const MARKER = Symbol.for("open-managed-agents.runtime-error");

/** Options every error constructor takes. */
export interface ManagedRuntimeErrorOptions {
  /** Human-readable message. Never include secrets: it is logged and sent over HTTP. */
  readonly message: string;
  /** Safe, JSON-serializable details. Secret-bearing keys are refused by type and dropped at runtime. */
  readonly context?: ErrorContext;
  /** The underlying error, kept for diagnostics; it does not cross HTTP. */
  readonly cause?: unknown;
}

/** The wire form of an error: what crosses HTTP and is rebuilt by {@link ManagedRuntimeError.fromJSON}. */
export interface ManagedRuntimeErrorJSON {
  readonly code: ErrorCode;
  readonly message: string;
  readonly context?: Readonly<Record<string, ErrorContextValue>>;
}

/**
 * Base class of every error this project throws on purpose. Each carries a stable {@link ErrorCode},
 * a safe context and an optional cause. Use {@link ManagedRuntimeError.isInstance} rather than
 * `instanceof`: it holds across duplicate installs of this package.
 */
export class ManagedRuntimeError extends Error {
  /** Stable machine-readable code. */
  readonly code: ErrorCode;
  /** Safe details; never contains secrets. */
  readonly context: Readonly<Record<string, ErrorContextValue>>;
  private readonly [MARKER] = true;

  constructor(code: ErrorCode, options: ManagedRuntimeErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ManagedRuntimeError";
    this.code = code;
    this.context = Object.freeze(sanitizeErrorContext(options.context));
  }

  /** HTTP status this error maps to. */
  get httpStatus(): number {
    return ERROR_HTTP_STATUS[this.code];
  }

  /** True for any error built by this package, whichever copy of it is installed. */
  static isInstance(error: unknown): error is ManagedRuntimeError {
    return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[MARKER] === true;
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
   * Rebuilds a typed error from its wire form. An unknown or missing code becomes `upstream_protocol`,
   * so a peer that speaks a newer taxonomy still yields a typed error.
   */
  static fromJSON(json: unknown): ManagedRuntimeError {
    const record = typeof json === "object" && json !== null ? (json as Record<string, unknown>) : {};
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

type ErrorClass = new (options: ManagedRuntimeErrorOptions) => ManagedRuntimeError;
const registry = new Map<ErrorCode, ErrorClass>();

/** Registers the concrete class for a code so {@link createError} and `fromJSON` rebuild it. */
export function registerErrorClass(code: ErrorCode, errorClass: ErrorClass): void {
  registry.set(code, errorClass);
}

/** Builds the concrete error class registered for `code`. */
export function createError(code: ErrorCode, options: ManagedRuntimeErrorOptions): ManagedRuntimeError {
  const errorClass = registry.get(code);
  return errorClass ? new errorClass(options) : new ManagedRuntimeError(code, options);
}
