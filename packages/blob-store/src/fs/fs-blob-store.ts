import { createHash, randomUUID } from "node:crypto";
import { type FileHandle, link, mkdir, open, rename, rmdir, stat, unlink } from "node:fs/promises";
import { dirname, isAbsolute, join, resolve } from "node:path";
import * as z from "zod";
import {
  LimitExceededError,
  NotFoundError,
  parseRecord,
} from "@open-managed-agents/runtime-resource-contract";
import { validateBlobKey } from "../blob-key.js";
import { guardOperation } from "../blob-errors.js";
import { checkedChunks, normalizeBody } from "../blob-body.js";
import { createBlobObject } from "../blob-object.js";
import { type ParsedPutOptions, parseListOptions, parsePutOptions } from "../blob-options.js";
import type {
  BlobBody,
  BlobListOptions,
  BlobListResult,
  BlobObject,
  BlobObjectInfo,
  BlobPutOptions,
  BlobStore,
} from "../ports.js";
import { encodeTrailer, fileBodyStream, readTrailer } from "./fs-object-file.js";
import {
  MAX_FS_SEGMENT_BYTES,
  isErrorCode,
  objectPathForKey,
  parentDirectories,
  walkKeys,
} from "./fs-key-paths.js";

/** Chunk size of a body read by a default reader (a BYOB reader reads as much as its buffer takes). */
const BODY_CHUNK_BYTES = 256 * 1024;

/** Options of {@link createFsBlobStore}. */
export interface FsBlobStoreOptions {
  /** Absolute directory that holds the objects; created on the first put. */
  readonly rootDir: string;
}

// A relative root would follow the process's working directory: a host started from another folder would
// write its checkpoints somewhere else and find none of the earlier ones.
const optionsSchema = z.strictObject({
  rootDir: z
    .string()
    .min(1)
    .refine(
      (dir) => isAbsolute(dir),
      "must be an absolute path (resolve it against the folder you mean first)",
    ),
});

/**
 * A {@link BlobStore} on the local filesystem (Node only). Each object is one file holding its body
 * followed by a metadata trailer. A put streams into a temporary file in the target directory,
 * syncs it and commits with `rename`, or with `link` when `ifNoneMatch` is set, which fails on an
 * existing name and so lets exactly one conditional writer win.
 *
 * @throws InvalidConfigError when `rootDir` is missing or not absolute.
 */
export function createFsBlobStore(options: FsBlobStoreOptions): BlobStore {
  const rootDir = resolve(
    parseRecord(optionsSchema, options, {
      record: "filesystem blob store options",
      code: "invalid_config",
    }).rootDir,
  );

  const run = <T>(operation: string, key: string | undefined, call: () => Promise<T>): Promise<T> =>
    guardOperation({ store: "filesystem", operation, ...(key === undefined ? {} : { key }) }, call);

  async function readInfo(key: string, path: string): Promise<BlobObjectInfo | null> {
    const handle = await openIfExists(path);
    if (!handle) return null;
    try {
      return await readTrailer(handle, key);
    } finally {
      await handle.close();
    }
  }

  return {
    async put(
      key: string,
      body: BlobBody,
      putOptions?: BlobPutOptions,
    ): Promise<BlobObjectInfo | null> {
      validateBlobKey(key);
      const parsed = parsePutOptions(putOptions);
      const normalized = normalizeBody(body, parsed.contentLength);
      const path = objectPathForKey(rootDir, key);
      if (path === null) {
        throw new LimitExceededError({
          message: `a key segment is longer than the ${MAX_FS_SEGMENT_BYTES} bytes a file name can hold`,
          context: { key: key.slice(0, 200), limit: MAX_FS_SEGMENT_BYTES },
        });
      }
      // Bytes in memory are written as they are: slicing them into a stream would copy each one once more.
      const chunks =
        normalized.kind === "bytes"
          ? [normalized.bytes]
          : checkedChunks(normalized.stream, normalized.length);
      return run("put", key, async () => {
        const { tempPath, info } = await writeTempObject(path, key, chunks, parsed);
        try {
          if (parsed.ifNoneMatch) {
            try {
              await link(tempPath, path);
            } catch (error) {
              if (isErrorCode(error, "EEXIST")) return null;
              throw error;
            }
          } else {
            await rename(tempPath, path);
          }
          await syncDirectory(dirname(path));
          return info;
        } finally {
          await unlink(tempPath).catch(() => undefined);
        }
      });
    },

    async get(key: string): Promise<BlobObject | null> {
      validateBlobKey(key);
      const path = objectPathForKey(rootDir, key);
      const info = path === null ? null : await run("get", key, () => readInfo(key, path));
      if (path === null || info === null) return null;
      return createBlobObject(
        info,
        async () => {
          // The body reopens the file and checks it is still the version `get` described.
          const handle = await openIfExists(path);
          const current = handle ? await readTrailer(handle, key).catch(() => null) : null;
          if (
            !handle ||
            !current ||
            current.etag !== info.etag ||
            current.uploaded.getTime() !== info.uploaded.getTime()
          ) {
            await handle?.close();
            throw new NotFoundError({
              message: `blob '${key}' changed or was deleted after it was read`,
              context: { key },
            });
          }
          return fileBodyStream(handle, info.size, BODY_CHUNK_BYTES);
        },
        { byteStream: { chunkBytes: BODY_CHUNK_BYTES } },
      );
    },

    async head(key: string): Promise<BlobObjectInfo | null> {
      validateBlobKey(key);
      const path = objectPathForKey(rootDir, key);
      return path === null ? null : run("head", key, () => readInfo(key, path));
    },

    async delete(key: string): Promise<void> {
      validateBlobKey(key);
      const path = objectPathForKey(rootDir, key);
      if (path === null) return;
      await run("delete", key, () => removeObject(rootDir, key, path));
    },

    async list(listOptions?: BlobListOptions): Promise<BlobListResult> {
      const { prefix, cursor, limit } = parseListOptions(listOptions);
      return run("list", undefined, async () => {
        const objects: BlobObjectInfo[] = [];
        let lastKey: string | undefined;
        for await (const key of walkKeys(rootDir, prefix, cursor)) {
          if (objects.length === limit) return { objects, cursor: lastKey ?? key };
          const path = objectPathForKey(rootDir, key);
          const info = path === null ? null : await readInfo(key, path);
          if (info) objects.push(info);
          lastKey = key;
        }
        return { objects };
      });
    },
  };
}

async function removeObject(rootDir: string, key: string, path: string): Promise<void> {
  await unlink(path).catch((error: unknown) => {
    if (!isErrorCode(error, "ENOENT")) throw error;
  });
  for (const directory of parentDirectories(rootDir, key)) {
    // A concurrent put may be filling the directory; it retries when its directory vanishes.
    const removed = await rmdir(directory).then(
      () => true,
      () => false,
    );
    if (!removed) break;
  }
}

async function writeTempObject(
  path: string,
  key: string,
  chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
  options: ParsedPutOptions,
): Promise<{ tempPath: string; info: BlobObjectInfo }> {
  const tempPath = join(dirname(path), `.${randomUUID()}.tmp`);
  const handle = await openTempFile(tempPath);
  const hash = createHash("sha256");
  let size = 0;
  try {
    // Each chunk is written before the next is read: a byte stream's reads reuse one buffer.
    for await (const chunk of chunks) {
      hash.update(chunk);
      await writeAll(handle, chunk);
      size += chunk.byteLength;
    }
    const info: BlobObjectInfo = {
      key,
      size,
      etag: hash.digest("hex"),
      contentType: options.contentType,
      customMetadata: options.customMetadata,
      uploaded: new Date(),
    };
    await writeAll(handle, encodeTrailer(info));
    await handle.datasync();
    return { tempPath, info };
  } catch (error) {
    await unlink(tempPath).catch(() => undefined);
    throw error;
  } finally {
    await handle.close();
  }
}

async function openTempFile(tempPath: string): Promise<FileHandle> {
  // A concurrent delete may remove an empty parent between mkdir and open; a few retries cover it.
  for (let attempt = 1; ; attempt += 1) {
    await makeDirectories(dirname(tempPath));
    try {
      return await open(tempPath, "wx", 0o644);
    } catch (error) {
      if (!isErrorCode(error, "ENOENT") || attempt === 5) throw error;
    }
  }
}

/**
 * `mkdir -p`. Node's recursive mkdir reports ENOENT when a directory cannot be created on a read-only
 * filesystem; creating the missing ones one by one surfaces the real cause (EROFS, EACCES, ENOSPC).
 */
async function makeDirectories(directory: string): Promise<void> {
  try {
    await mkdir(directory, { recursive: true });
    return;
  } catch (error) {
    if (!isErrorCode(error, "ENOENT")) throw error;
  }
  const missing: string[] = [];
  for (let current = directory; current !== dirname(current); current = dirname(current)) {
    missing.unshift(current);
    if (await exists(dirname(current))) break;
  }
  for (const path of missing) {
    await mkdir(path).catch((error: unknown) => {
      if (!isErrorCode(error, "EEXIST")) throw error;
    });
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function writeAll(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.byteLength) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.byteLength - offset);
    offset += bytesWritten;
  }
}

async function openIfExists(path: string): Promise<FileHandle | null> {
  try {
    return await open(path, "r");
  } catch (error) {
    if (isErrorCode(error, "ENOENT") || isErrorCode(error, "ENOTDIR")) return null;
    throw error;
  }
}

async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
