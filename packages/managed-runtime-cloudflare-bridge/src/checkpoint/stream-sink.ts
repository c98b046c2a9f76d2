import { once } from "node:events";
import { PassThrough } from "node:stream";
import { copyBounded } from "./bounded-copy.js";

/** Bytes buffered between the bridge and whoever reads the sink before the bridge reads wait. */
const BUFFERED_BYTES = 256 * 1024;

/** Where fetched archive parts go when they are consumed as they arrive instead of spooled to disk. */
export interface StreamSink {
  /** The bytes of every appended stream, in order; ends at {@link finish}. */
  readonly readable: PassThrough;
  /** Writes a stream through, waiting while the reader is behind; throws `limit_exceeded` past `maxBytes`. */
  append(stream: ReadableStream<Uint8Array>, signal?: AbortSignal): Promise<void>;
  /** Ends the readable; returns the bytes written. */
  finish(): Promise<{ readonly size: number }>;
  /** Fails the readable (and an append waiting on it). */
  destroy(error: Error): void;
}

/** A sink whose reader runs alongside the transfer, so receiving and storing overlap. */
export function createStreamSink(options: { readonly maxBytes: number }): StreamSink {
  const readable = new PassThrough({ highWaterMark: BUFFERED_BYTES });
  // Failures reach the reader through its own pipeline and the writer through `append`.
  readable.on("error", () => undefined);
  let size = 0;
  return {
    readable,
    async append(stream, signal) {
      size = await copyBounded(
        stream,
        { startBytes: size, maxBytes: options.maxBytes, signal },
        async (value) => {
          if (readable.destroyed)
            throw readable.errored ?? new Error("the checkpoint reader stopped");
          if (!readable.write(value)) await once(readable, "drain", { signal });
        },
      );
    },
    async finish() {
      readable.end();
      return { size };
    },
    destroy(error) {
      readable.destroy(error);
    },
  };
}
