import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";
import { readAllBytes } from "./blob-body.js";
import type { BlobObject, BlobObjectInfo } from "./ports.js";

/** Options of {@link createBlobObject}. */
export interface BlobObjectOptions {
  /**
   * Whether `openBody` answers a byte stream. The body is one too, then: a BYOB reader's reads land in its own
   * buffer, straight from the store, and a default reader gets chunks of `chunkBytes`.
   */
  readonly byteStream?: { readonly chunkBytes: number };
}

/**
 * Builds a {@link BlobObject} whose body opens lazily through `openBody`. The body is read once:
 * a second call of any accessor throws InvalidRequestError, the same on every implementation.
 */
export function createBlobObject(
  info: BlobObjectInfo,
  openBody: () => ReadableStream<Uint8Array> | Promise<ReadableStream<Uint8Array>>,
  options: BlobObjectOptions = {},
): BlobObject {
  let opened = false;
  const claim = (): void => {
    if (opened)
      throw new InvalidRequestError({
        message: `the body of blob '${info.key}' was already read`,
        context: { key: info.key },
      });
    opened = true;
  };
  const stream = (): ReadableStream<Uint8Array> => {
    claim();
    if (options.byteStream) return lazyByteStream(openBody, options.byteStream.chunkBytes);
    // The body opens on the first read, not when the stream is made (a high-water mark of 0 pulls only on
    // demand), and a cancel waits for an open in flight and cancels what it opened: a body cancelled or
    // dropped before it was read leaves no file or connection open behind it.
    let opening: Promise<ReadableStreamDefaultReader<Uint8Array>> | undefined;
    const open = () => (opening ??= Promise.resolve(openBody()).then((body) => body.getReader()));
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          const { done, value } = await (await open()).read();
          if (done) controller.close();
          else controller.enqueue(value);
        },
        async cancel(reason) {
          const reader = await opening?.catch(() => undefined);
          await reader?.cancel(reason);
        },
      },
      { highWaterMark: 0 },
    );
  };
  const bytes = async (): Promise<Uint8Array> => {
    claim();
    return readAllBytes(await openBody());
  };
  return {
    ...info,
    bytes,
    text: async () => new TextDecoder().decode(await bytes()),
    stream,
  };
}

/**
 * The lazily opened body of a store whose bodies are byte streams, a byte stream itself: a BYOB read is
 * passed on with the reader's own buffer (which comes back filled, in a view of the same memory), and a
 * default read is a BYOB read into a fresh buffer of `chunkBytes`. Opens and cancels as the default body does.
 */
function lazyByteStream(
  openBody: () => ReadableStream<Uint8Array> | Promise<ReadableStream<Uint8Array>>,
  chunkBytes: number,
): ReadableStream<Uint8Array> {
  let opening: Promise<ReadableStreamBYOBReader> | undefined;
  const open = () =>
    (opening ??= Promise.resolve(openBody()).then((body) => body.getReader({ mode: "byob" })));
  return new ReadableStream(
    {
      type: "bytes",
      async pull(controller) {
        const reader = await open();
        const request = controller.byobRequest;
        const view = request?.view;
        if (request && view) {
          const { done, value } = await reader.read(
            new Uint8Array(view.buffer, view.byteOffset, view.byteLength),
          );
          if (done) controller.close();
          // The reader's buffer moved to the inner stream and back: the answer is a view of it.
          request.respondWithNewView(value ?? new Uint8Array(0));
          return;
        }
        const { done, value } = await reader.read(new Uint8Array(chunkBytes));
        if (done) controller.close();
        else controller.enqueue(value);
      },
      async cancel(reason) {
        const reader = await opening?.catch(() => undefined);
        await reader?.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/** Removes the quotes HTTP puts around an entity tag, so every implementation reports the bare value. */
export function bareEtag(etag: string): string {
  return etag.replace(/^W\//, "").replace(/^"(.*)"$/, "$1");
}
