import { LimitExceededError } from "@open-managed-agents/runtime-resource-contract";

/** Limits of one collect. */
export interface OutputLimits {
  readonly maxFiles: number;
  readonly maxBytes: number;
}

/** The `limit_exceeded` error for more than `maxFiles` files. */
export function maxFilesExceeded(maxFiles: number): LimitExceededError {
  return new LimitExceededError({
    message: `session outputs hold more than maxFiles (${maxFiles}) files`,
    context: { limit: "maxFiles", maxFiles },
  });
}

/** The `limit_exceeded` error for more than `maxBytes` bytes. */
export function maxBytesExceeded(maxBytes: number): LimitExceededError {
  return new LimitExceededError({
    message: `session outputs hold more than maxBytes (${maxBytes}) bytes`,
    context: { limit: "maxBytes", maxBytes },
  });
}
