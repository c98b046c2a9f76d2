import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { IO_CHUNK_BYTES } from "./constants.js";
import type { StreamDigest } from "./digest-transform.js";
import type { TarFiller } from "./tar-filler.js";

/** Where a pack stream reports its end: the digest of everything it emitted, or the failure. */
export interface DigestSink {
  resolve(digest: StreamDigest): void;
  reject(error: unknown): void;
}

/**
 * A Node `Readable` of tar bytes: each chunk is a fresh 1 MiB buffer filled from the segments and hashed.
 * The digest is reported once the consumer has read the last byte (`end`).
 */
export function createTarReadable(filler: TarFiller, sink: DigestSink | null): Readable {
  const hash = createHash("sha256");
  let bytes = 0;
  return new Readable({
    highWaterMark: IO_CHUNK_BYTES,
    read() {
      const buffer = Buffer.allocUnsafe(IO_CHUNK_BYTES);
      filler.fill(buffer).then(
        (count) => {
          if (count === 0) {
            const result = { sha256: hash.digest("hex"), bytes };
            this.once("end", () => sink?.resolve(result));
            this.push(null);
            return;
          }
          const chunk = buffer.subarray(0, count);
          hash.update(chunk);
          bytes += count;
          this.push(chunk);
        },
        (error: unknown) => this.destroy(error as Error),
      );
    },
    destroy(error, callback) {
      if (error) sink?.reject(error);
      filler.close().then(
        () => callback(error),
        () => callback(error),
      );
    },
  });
}

/**
 * A web byte stream of tar bytes. With a BYOB reader the caller's buffer is filled directly (files are
 * read from disk into it), so a consumer that reuses one buffer packs without allocating; a default
 * reader gets 1 MiB chunks.
 */
export function createTarByteStream(filler: TarFiller, sink: DigestSink): ReadableStream<Uint8Array> {
  const hash = createHash("sha256");
  let bytes = 0;
  return new ReadableStream({
    type: "bytes",
    autoAllocateChunkSize: IO_CHUNK_BYTES,
    async pull(controller) {
      const request = controller.byobRequest as ReadableStreamBYOBRequest;
      const view = request.view as Uint8Array;
      try {
        const count = await filler.fill(view);
        if (count === 0) {
          sink.resolve({ sha256: hash.digest("hex"), bytes });
          controller.close();
          request.respond(0);
          return;
        }
        hash.update(view.subarray(0, count));
        bytes += count;
        request.respond(count);
      } catch (error) {
        sink.reject(error);
        controller.error(error);
        await filler.close().catch(() => undefined);
      }
    },
    async cancel(reason) {
      sink.reject(reason ?? new Error("archive stream cancelled"));
      await filler.close();
    },
  }) as ReadableStream<Uint8Array>;
}
