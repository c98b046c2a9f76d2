import { LimitExceededError } from "@open-managed-agents/runtime-resource-contract";

/**
 * Reads `stream` to its end and hands each chunk to `write` (awaited, for backpressure), counting from
 * `startBytes`; throws `limit_exceeded` once the count passes `maxBytes`. Returns the new count; the
 * stream is cancelled whatever happens.
 */
export async function copyBounded(
  stream: ReadableStream<Uint8Array>,
  options: {
    readonly startBytes: number;
    readonly maxBytes: number;
    readonly signal?: AbortSignal;
  },
  write: (chunk: Uint8Array, total: number) => Promise<void> | void,
): Promise<number> {
  const reader = stream.getReader();
  let total = options.startBytes;
  try {
    for (;;) {
      if (options.signal?.aborted) throw options.signal.reason;
      const { value, done } = await reader.read();
      if (done) return total;
      total += value.byteLength;
      if (total > options.maxBytes) {
        throw new LimitExceededError({
          message: `checkpoint exceeds ${options.maxBytes} bytes`,
          context: { limit: "maxCheckpointBytes", maxCheckpointBytes: options.maxBytes },
        });
      }
      await write(value, total);
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
