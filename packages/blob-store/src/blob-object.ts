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
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        reader ??= (await openBody()).getReader();
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      async cancel(reason) {
        await reader?.cancel(reason);
      },
    });
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
