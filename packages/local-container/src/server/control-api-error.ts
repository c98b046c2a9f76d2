import { now } from "./control-api-responses.js";

/** Optional members of a control API error body. */
export interface ControlErrorExtras {
  readonly operation?: string;
  readonly suggestion?: string;
}

const CONTROL_API_ERROR_MARKER = Symbol.for("open-managed-agents.control-api-error");

/** An error answered as the control API's `{code, message, context, httpStatus, timestamp}` body. */
export class ControlApiError extends Error {
  readonly code: string;
  readonly httpStatus: number;
  readonly context: Readonly<Record<string, unknown>>;
  readonly extras: ControlErrorExtras;

  constructor(
    code: string,
    httpStatus: number,
    message: string,
    context: Record<string, unknown> = {},
    extras: ControlErrorExtras = {},
  ) {
    super(message);
    this.name = "ControlApiError";
    Object.defineProperty(this, CONTROL_API_ERROR_MARKER, { value: true });
    this.code = code;
    this.httpStatus = httpStatus;
    this.context = context;
    this.extras = extras;
  }

  /** True for a {@link ControlApiError} from whichever copy of this module built it. */
  static isInstance(error: unknown): error is ControlApiError {
    return (
      typeof error === "object" &&
      error !== null &&
      (error as Record<symbol, unknown>)[CONTROL_API_ERROR_MARKER] === true
    );
  }

  /** The wire body; there is no `success` member in error bodies. */
  toBody(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      context: this.context,
      ...(this.extras.operation === undefined ? {} : { operation: this.extras.operation }),
      httpStatus: this.httpStatus,
      timestamp: now(),
      ...(this.extras.suggestion === undefined ? {} : { suggestion: this.extras.suggestion }),
    };
  }
}

/** `FILE_NOT_FOUND` in the shape `/api/read` and `/api/delete` use. */
export function fileNotFound(path: string, operation: string): ControlApiError {
  return new ControlApiError(
    "FILE_NOT_FOUND",
    404,
    `File not found: ${path}`,
    { path, operation },
    {
      operation,
      suggestion: "Check that the path exists and is spelled correctly",
    },
  );
}
