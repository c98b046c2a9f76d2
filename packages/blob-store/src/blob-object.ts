import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";
import { readAllBytes } from "./blob-body.js";
import type { BlobObject, BlobObjectInfo } from "./ports.js";

/**
 * Builds a {@link BlobObject} whose body opens lazily through `openBody`. The body is read once:
 * a second call of any accessor throws InvalidRequestError, the same on every implementation.
 */
export function createBlobObject(info: BlobObjectInfo, openBody: () => ReadableStream<Uint8Array> | Promise<ReadableStream<Uint8Array>>): BlobObject {
  let opened = false;
  const claim = (): void => {
    if (opened) throw new InvalidRequestError({ message: `the body of blob '${info.key}' was already read`, context: { key: info.key } });
    opened = true;
  };
  const stream = (): ReadableStream<Uint8Array> => {
    claim();
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

/** Removes the quotes HTTP puts around an entity tag, so every implementation reports the bare value. */
export function bareEtag(etag: string): string {
  return etag.replace(/^W\//, "").replace(/^"(.*)"$/, "$1");
}
