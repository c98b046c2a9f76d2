import type { FileHandle } from "node:fs/promises";
import * as z from "zod";
import { IntegrityError } from "@open-managed-agents/runtime-resource-contract";
import type { BlobObjectInfo } from "../ports.js";

// An object file is `[body][metadata JSON][u32 BE metadata length][8-byte magic]`. Body and metadata
// live in one file, so one rename (or link) commits both and a reader never pairs a body with the
// metadata of another write.
const MAGIC = new TextEncoder().encode("OMABLOB1");
const FOOTER_BYTES = 4 + MAGIC.byteLength;
const MAX_METADATA_BYTES = 64 * 1024;

const metadataSchema = z.strictObject({
  version: z.literal(1),
  key: z.string(),
  size: z.number().int().nonnegative(),
  etag: z.string().min(1),
  contentType: z.string().optional(),
  customMetadata: z.record(z.string(), z.string()),
  uploaded: z.iso.datetime(),
});

/** Bytes to append after the body to complete an object file. */
export function encodeTrailer(info: BlobObjectInfo): Uint8Array {
  const metadata = new TextEncoder().encode(
    JSON.stringify({
      version: 1,
      key: info.key,
      size: info.size,
      etag: info.etag,
      contentType: info.contentType,
      customMetadata: info.customMetadata,
      uploaded: info.uploaded.toISOString(),
    }),
  );
  const trailer = new Uint8Array(metadata.byteLength + FOOTER_BYTES);
  trailer.set(metadata, 0);
  new DataView(trailer.buffer).setUint32(metadata.byteLength, metadata.byteLength);
  trailer.set(MAGIC, metadata.byteLength + 4);
  return trailer;
}

/**
 * Reads the metadata trailer of an open object file.
 *
 * @throws IntegrityError when the file is not a complete object file for `key`.
 */
export async function readTrailer(handle: FileHandle, key: string): Promise<BlobObjectInfo> {
  const corrupt = (reason: string): IntegrityError =>
    new IntegrityError({
      message: `stored blob '${key}' is corrupt: ${reason}`,
      context: { key, reason },
    });
  const { size: fileSize } = await handle.stat();
  if (fileSize < FOOTER_BYTES) throw corrupt("file is shorter than its footer");
  const footer = await readExactly(handle, fileSize - FOOTER_BYTES, FOOTER_BYTES);
  if (!MAGIC.every((byte, index) => footer[4 + index] === byte))
    throw corrupt("footer magic is missing");
  const metadataLength = new DataView(footer.buffer, footer.byteOffset).getUint32(0);
  if (metadataLength > MAX_METADATA_BYTES || metadataLength > fileSize - FOOTER_BYTES)
    throw corrupt("metadata length is out of range");
  const metadataBytes = await readExactly(
    handle,
    fileSize - FOOTER_BYTES - metadataLength,
    metadataLength,
  );
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(metadataBytes));
  } catch {
    throw corrupt("metadata is not JSON");
  }
  const parsed = metadataSchema.safeParse(json);
  if (!parsed.success) throw corrupt("metadata does not match its schema");
  const metadata = parsed.data;
  if (metadata.key !== key) throw corrupt("metadata names another key");
  if (metadata.size !== fileSize - FOOTER_BYTES - metadataLength)
    throw corrupt("body size does not match the metadata");
  return {
    key,
    size: metadata.size,
    etag: metadata.etag,
    ...(metadata.contentType === undefined ? {} : { contentType: metadata.contentType }),
    customMetadata: metadata.customMetadata,
    uploaded: new Date(metadata.uploaded),
  };
}

async function readExactly(
  handle: FileHandle,
  position: number,
  length: number,
): Promise<Uint8Array> {
  const buffer = new Uint8Array(length);
  let offset = 0;
  while (offset < length) {
    const { bytesRead } = await handle.read(buffer, offset, length - offset, position + offset);
    if (bytesRead === 0) break;
    offset += bytesRead;
  }
  if (offset !== length)
    throw new IntegrityError({
      message: "stored blob ended early",
      context: { expected: length, actual: offset },
    });
  return buffer;
}

/**
 * A byte stream over the first `size` bytes of an open file; it closes the handle when done or cancelled. A
 * reader in BYOB mode has each read land in its own buffer, so reading a large object allocates nothing per
 * chunk; a default reader gets chunks of `chunkSize`.
 */
export function fileBodyStream(
  handle: FileHandle,
  size: number,
  chunkSize = 256 * 1024,
): ReadableStream<Uint8Array> {
  let position = 0;
  return new ReadableStream({
    type: "bytes",
    async pull(controller) {
      try {
        const request = controller.byobRequest;
        if (position >= size) {
          await handle.close();
          controller.close();
          // A read waiting in BYOB mode is answered (empty) only once the stream is closed.
          request?.respond(0);
          return;
        }
        const view = request?.view;
        if (view) {
          const into = new Uint8Array(
            view.buffer,
            view.byteOffset,
            Math.min(view.byteLength, size - position),
          );
          const { bytesRead } = await handle.read(into, 0, into.byteLength, position);
          if (bytesRead === 0)
            throw new IntegrityError({
              message: "stored blob ended early",
              context: { expected: size, actual: position },
            });
          position += bytesRead;
          (request as ReadableStreamBYOBRequest).respond(bytesRead);
          return;
        }
        const chunk = await readExactly(handle, position, Math.min(chunkSize, size - position));
        position += chunk.byteLength;
        controller.enqueue(chunk);
      } catch (error) {
        await handle.close().catch(() => undefined);
        throw error;
      }
    },
    async cancel() {
      await handle.close();
    },
  });
}
