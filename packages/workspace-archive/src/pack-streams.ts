import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { IO_CHUNK_BYTES } from "./io-sizes.js";
import type { StreamDigest } from "./digest-transform.js";
import { createStreamHasher, type StreamHasher } from "./off-thread-sha256.js";
import type { TarFiller } from "./tar-filler.js";

/** Where a pack stream reports its end: the digest of everything it emitted, or the failure. */
export interface DigestSink {
  resolve(digest: StreamDigest): void;
  reject(error: unknown): void;
}

/**
 * A Node `Readable` of tar bytes: each chunk is a fresh 1 MiB buffer filled from the segments and hashed
 * in place (not at all without a sink: gzip hashes its output instead). Not on a thread: fresh chunks
 * bound this path (page faults), and a thread and its ring would take its peak memory past the package's
 * target (docs/workspace-archive.md, "Benchmark"). The digest is reported once the consumer has read the
 * last byte (`end`).
 */
export function createTarReadable(filler: TarFiller, sink: DigestSink | null): Readable {
  const hasher = sink === null ? null : createInPlaceHasher();
  const next = async (stream: Readable) => {
    const buffer = Buffer.allocUnsafe(IO_CHUNK_BYTES);
    const count = await filler.fill(buffer);
    if (count === 0) {
      const result = await hasher?.finish();
      if (result !== undefined) stream.once("end", () => sink?.resolve(result));
      stream.push(null);
      return;
    }
    const chunk = buffer.subarray(0, count);
    await hasher?.update(chunk);
    stream.push(chunk);
  };
  return new Readable({
    highWaterMark: IO_CHUNK_BYTES,
    read() {
      next(this).catch((error: unknown) => this.destroy(error as Error));
    },
    destroy(error, callback) {
      hasher?.abort();
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
 * reader gets 1 MiB chunks. Hashing runs on a thread of its own, overlapping with the next fill.
 */
export function createTarByteStream(
  filler: TarFiller,
  sink: DigestSink,
): ReadableStream<Uint8Array> {
  const hasher = createStreamHasher();
  return new ReadableStream({
    type: "bytes",
    autoAllocateChunkSize: IO_CHUNK_BYTES,
    async pull(controller) {
      const request = controller.byobRequest as ReadableStreamBYOBRequest;
      const view = request.view as Uint8Array;
      try {
        const count = await filler.fill(view);
        if (count === 0) {
          sink.resolve(await hasher.finish());
          controller.close();
          request.respond(0);
          return;
        }
        await hasher.update(view.subarray(0, count));
        request.respond(count);
      } catch (error) {
        hasher.abort();
        sink.reject(error);
        controller.error(error);
        await filler.close().catch(() => undefined);
      }
    },
    async cancel(reason) {
      hasher.abort();
      sink.reject(reason ?? new Error("archive stream cancelled"));
      await filler.close();
    },
  }) as ReadableStream<Uint8Array>;
}

/** The {@link StreamHasher} contract on the calling thread. */
function createInPlaceHasher(): StreamHasher {
  const hash = createHash("sha256");
  let bytes = 0;
  return {
    async update(view) {
      hash.update(view);
      bytes += view.length;
    },
    async finish() {
      return { sha256: hash.digest("hex"), bytes };
    },
    abort() {},
  };
}
