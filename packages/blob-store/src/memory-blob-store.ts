import { sha256Hex } from "@open-managed-agents/runtime-utils";
import { compareBlobKeys, validateBlobKey } from "./blob-key.js";
import { bytesToStream, checkBodyStream, normalizeBody, readAllBytes } from "./blob-body.js";
import { createBlobObject } from "./blob-object.js";
import { parseListOptions, parsePutOptions } from "./blob-options.js";
import type {
  BlobBody,
  BlobListOptions,
  BlobListResult,
  BlobObject,
  BlobObjectInfo,
  BlobPutOptions,
  BlobStore,
} from "./ports.js";

interface StoredBlob {
  readonly info: BlobObjectInfo;
  readonly bytes: Uint8Array;
}

/**
 * A {@link BlobStore} that keeps every object in memory, for tests and single-process use. It holds
 * whole bodies by design; stream bodies are read fully before they are stored. Runs anywhere
 * (Node, Workers, browsers). Conditional puts decide at commit time, so concurrent writers race fairly.
 */
export function createMemoryBlobStore(): BlobStore {
  const objects = new Map<string, StoredBlob>();

  return {
    async put(
      key: string,
      body: BlobBody,
      options?: BlobPutOptions,
    ): Promise<BlobObjectInfo | null> {
      validateBlobKey(key);
      const parsed = parsePutOptions(options);
      const normalized = normalizeBody(body, parsed.contentLength);
      // A copy the caller cannot reach: a Node Buffer's own `slice` is a view, so the copy is a plain Uint8Array.
      const bytes =
        normalized.kind === "bytes"
          ? new Uint8Array(normalized.bytes)
          : await readChecked(normalized.stream, normalized.length);
      const info: BlobObjectInfo = {
        key,
        size: bytes.byteLength,
        etag: await sha256Hex(bytes),
        contentType: parsed.contentType,
        customMetadata: Object.freeze({ ...parsed.customMetadata }),
        uploaded: new Date(),
      };
      // The check and the write run in one synchronous step, so exactly one conditional writer wins.
      if (parsed.ifNoneMatch && objects.has(key)) return null;
      objects.set(key, { info, bytes });
      return copyInfo(info);
    },

    async get(key: string): Promise<BlobObject | null> {
      validateBlobKey(key);
      const stored = objects.get(key);
      return stored
        ? createBlobObject(copyInfo(stored.info), () => bytesToStream(stored.bytes))
        : null;
    },

    async head(key: string): Promise<BlobObjectInfo | null> {
      validateBlobKey(key);
      const stored = objects.get(key);
      return stored ? copyInfo(stored.info) : null;
    },

    async delete(key: string): Promise<void> {
      validateBlobKey(key);
      objects.delete(key);
    },

    async list(options?: BlobListOptions): Promise<BlobListResult> {
      const { prefix, cursor, limit } = parseListOptions(options);
      const keys = [...objects.keys()]
        .filter(
          (key) =>
            key.startsWith(prefix) && (cursor === undefined || compareBlobKeys(key, cursor) > 0),
        )
        .sort(compareBlobKeys);
      const page = keys.slice(0, limit);
      const infos = page.flatMap((key) => {
        const stored = objects.get(key);
        return stored ? [copyInfo(stored.info)] : [];
      });
      const last = page.at(-1);
      return keys.length > limit && last !== undefined
        ? { objects: infos, cursor: last }
        : { objects: infos };
    },
  };
}

async function readChecked(
  stream: ReadableStream<Uint8Array>,
  length: number | undefined,
): Promise<Uint8Array> {
  const checked = checkBodyStream(stream, length);
  try {
    return await readAllBytes(checked.stream);
  } catch (error) {
    throw checked.failure() ?? error;
  }
}

function copyInfo(info: BlobObjectInfo): BlobObjectInfo {
  return {
    ...info,
    customMetadata: { ...info.customMetadata },
    uploaded: new Date(info.uploaded.getTime()),
  };
}
