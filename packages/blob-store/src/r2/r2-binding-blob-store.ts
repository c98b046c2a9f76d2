import * as z from "zod";
import { UpstreamProtocolError, parseRecord } from "@open-managed-agents/runtime-resource-contract";
import { validateBlobKey } from "../blob-key.js";
import { normalizeBody } from "../blob-body.js";
import { guardOperation } from "../blob-errors.js";
import { bareEtag, createBlobObject } from "../blob-object.js";
import { parseListOptions, parsePutOptions } from "../blob-options.js";
import type {
  BlobBody,
  BlobListOptions,
  BlobListResult,
  BlobObject,
  BlobObjectInfo,
  BlobPutOptions,
  BlobStore,
} from "../ports.js";
import type { R2BucketLike, R2ObjectLike } from "./r2-binding-types.js";
import { putR2Stream } from "./r2-stream-put.js";

/** Options of {@link createR2BindingBlobStore}. */
export interface R2BindingBlobStoreOptions {
  /**
   * Part size for streams put without `contentLength`: a stream up to this size is buffered and
   * put once; a longer one becomes a multipart upload of parts this size. At least 5 MiB.
   * @default 8 MiB
   */
  readonly partSizeBytes?: number;
}

const MIB = 1024 * 1024;
const optionsSchema = z.strictObject({
  partSizeBytes: z
    .number()
    .int()
    .min(5 * MIB)
    .max(5 * 1024 * MIB)
    .default(8 * MIB),
});

const r2ObjectSchema = z.object({
  key: z.string(),
  size: z.number().int().nonnegative(),
  etag: z.string().min(1),
  uploaded: z.date(),
  httpMetadata: z.object({ contentType: z.string().optional() }).optional(),
  customMetadata: z.record(z.string(), z.string()).optional(),
});

/**
 * A {@link BlobStore} over a Workers R2 binding. It runs inside a Worker and imports no Node module.
 * `ifNoneMatch` becomes the binding's `etagDoesNotMatch: "*"` condition (`If-None-Match: *`), which
 * R2 checks atomically.
 * Stream bodies: see {@link putR2Stream} — pass `contentLength` for a single conditional put of a
 * long stream.
 *
 * @throws InvalidConfigError for invalid options.
 */
export function createR2BindingBlobStore(
  bucket: R2BucketLike,
  options: R2BindingBlobStoreOptions = {},
): BlobStore {
  const { partSizeBytes } = parseRecord(optionsSchema, options, {
    record: "R2 binding blob store options",
    code: "invalid_config",
  });
  const run = <T>(operation: string, key: string | undefined, call: () => Promise<T>): Promise<T> =>
    guardOperation({ store: "R2 binding", operation, ...(key === undefined ? {} : { key }) }, call);

  return {
    async put(
      key: string,
      body: BlobBody,
      rawOptions?: BlobPutOptions,
    ): Promise<BlobObjectInfo | null> {
      validateBlobKey(key);
      const parsed = parsePutOptions(rawOptions);
      const normalized = normalizeBody(body, parsed.contentLength);
      const write = {
        httpMetadata: { contentType: parsed.contentType },
        customMetadata: { ...parsed.customMetadata },
      };
      const onlyIf = parsed.ifNoneMatch ? { etagDoesNotMatch: "*" } : undefined;
      return run("put", key, async () => {
        const stored =
          normalized.kind === "bytes"
            ? await bucket.put(key, normalized.bytes, { ...write, ...(onlyIf ? { onlyIf } : {}) })
            : await putR2Stream({
                bucket,
                key,
                stream: normalized.stream,
                length: normalized.length,
                write,
                onlyIf,
                partSizeBytes,
              });
        return stored === null ? null : toInfo(stored, "put");
      });
    },

    async get(key: string): Promise<BlobObject | null> {
      validateBlobKey(key);
      return run("get", key, async () => {
        const object = await bucket.get(key);
        if (object === null) return null;
        // The binding's body is a Web stream of bytes; only its declared type differs from the lib's.
        return createBlobObject(
          toInfo(object, "get"),
          () => object.body as unknown as ReadableStream<Uint8Array>,
        );
      });
    },

    async head(key: string): Promise<BlobObjectInfo | null> {
      validateBlobKey(key);
      return run("head", key, async () => {
        const object = await bucket.head(key);
        return object === null ? null : toInfo(object, "head");
      });
    },

    async delete(key: string): Promise<void> {
      validateBlobKey(key);
      await run("delete", key, () => bucket.delete(key));
    },

    async list(rawOptions?: BlobListOptions): Promise<BlobListResult> {
      const { prefix, cursor, limit } = parseListOptions(rawOptions);
      return run("list", undefined, async () => {
        const page = await bucket.list({
          limit,
          include: ["httpMetadata", "customMetadata"],
          ...(prefix ? { prefix } : {}),
          ...(cursor ? { cursor } : {}),
        });
        const objects = page.objects.map((object) => toInfo(object, "list"));
        return page.truncated && page.cursor ? { objects, cursor: page.cursor } : { objects };
      });
    },
  };
}

function toInfo(object: R2ObjectLike, operation: string): BlobObjectInfo {
  const parsed = r2ObjectSchema.safeParse(object);
  if (!parsed.success) {
    throw new UpstreamProtocolError({
      message: `the R2 binding's ${operation} returned a malformed object`,
      context: { operation },
    });
  }
  const { key, size, etag, uploaded, httpMetadata, customMetadata } = parsed.data;
  return {
    key,
    size,
    etag: bareEtag(etag),
    ...(httpMetadata?.contentType === undefined ? {} : { contentType: httpMetadata.contentType }),
    customMetadata: { ...customMetadata },
    uploaded,
  };
}
