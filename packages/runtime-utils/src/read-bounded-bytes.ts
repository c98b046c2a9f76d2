import { LimitExceededError, concatBytes } from "@open-managed-agents/runtime-resource-contract";

/** Options of {@link readBoundedBytes}. */
export interface ReadBoundedBytesOptions {
  /** Most bytes kept. */
  readonly maxBytes: number;
  /**
   * What a longer body does: `"throw"` cancels the stream and rejects with `tooLarge()`; `"truncate"`
   * cancels it and returns the first `maxBytes` bytes. @default "throw"
   */
  readonly overflow?: "throw" | "truncate";
  /** The error of `overflow: "throw"`. @default a `LimitExceededError` naming `maxBytes` */
  readonly tooLarge?: () => unknown;
}

/**
 * Reads a body stream into memory without ever holding much more than `maxBytes`: the read stops,
 * and the stream is cancelled, as soon as the limit is passed. A null body reads as no bytes.
 *
 * @throws LimitExceededError (or `tooLarge()`) for a body over the limit with `overflow: "throw"`.
 */
export async function readBoundedBytes(
  body: ReadableStream<Uint8Array> | null,
  options: ReadBoundedBytesOptions,
): Promise<Uint8Array> {
  const { maxBytes } = options;
  if (body === null) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return concatBytes(chunks);
      total += value.byteLength;
      if (total > maxBytes) {
        if (options.overflow === "truncate") {
          chunks.push(value.subarray(0, value.byteLength - (total - maxBytes)));
          return concatBytes(chunks);
        }
        throw options.tooLarge
          ? options.tooLarge()
          : new LimitExceededError({
              message: `the body is larger than ${maxBytes} bytes`,
              context: { maxBytes },
            });
      }
      chunks.push(value);
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** Reads a whole stream into one array, however long it is. Use {@link readBoundedBytes} for untrusted bodies. */
export async function readAllBytes(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return readBoundedBytes(stream, { maxBytes: Number.POSITIVE_INFINITY });
}
