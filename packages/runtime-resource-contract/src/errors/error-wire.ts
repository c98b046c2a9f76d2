import type { ErrorCode } from "./error-codes.js";
import type { ErrorContext, ErrorContextValue } from "./error-context.js";

/** Options every error constructor takes. */
export interface ManagedRuntimeErrorOptions {
  /** Human-readable message. Never include secrets: it is logged and sent over HTTP. */
  readonly message: string;
  /** Safe, JSON-serializable details. Secret-bearing keys are refused by type and dropped at runtime. */
  readonly context?: ErrorContext;
  /** The underlying error, kept for diagnostics; it does not cross HTTP. */
  readonly cause?: unknown;
}

/** The wire form of an error: what crosses HTTP and is rebuilt by `ManagedRuntimeError.fromJSON`. */
export interface ManagedRuntimeErrorJSON {
  readonly code: ErrorCode;
  readonly message: string;
  readonly context?: Readonly<Record<string, ErrorContextValue>>;
}
