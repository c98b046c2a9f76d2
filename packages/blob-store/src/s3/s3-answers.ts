import * as z from "zod";
import { bareEtag } from "../blob-object.js";
import type { ParsedPutOptions } from "../blob-options.js";
import type { BlobObjectInfo } from "../ports.js";
import { malformedS3Answer } from "./s3-errors.js";
import { decodeS3Metadata } from "./s3-metadata.js";

const objectHeadersSchema = z.object({
  ContentLength: z.number().int().nonnegative(),
  ETag: z.string().min(1),
  LastModified: z.date(),
  ContentType: z.string().optional(),
  Metadata: z.record(z.string(), z.string()).optional(),
});

const bodySchema = z.custom<{ transformToWebStream(): ReadableStream }>(
  (value) =>
    typeof (value as { transformToWebStream?: unknown } | null)?.transformToWebStream ===
    "function",
);

const putOutputSchema = z.object({ ETag: z.string().min(1) });

const listOutputSchema = z.object({
  Contents: z.array(z.object({ Key: z.string().min(1) })).optional(),
  IsTruncated: z.boolean().optional(),
});

/** Parses what the SDK returns; a missing field becomes an `upstream_protocol` error. */
export interface S3Answers {
  info(operation: string, key: string, output: unknown): BlobObjectInfo;
  object(
    key: string,
    output: unknown,
  ): { info: BlobObjectInfo; body: { transformToWebStream(): ReadableStream } };
  putInfo(key: string, output: unknown, size: number, options: ParsedPutOptions): BlobObjectInfo;
  listPage(output: unknown): { keys: string[]; truncated: boolean };
}

/** Answer parsers for one bucket. */
export function createS3Answers(bucket: string): S3Answers {
  function parse<S extends z.ZodType>(
    schema: S,
    output: unknown,
    operation: string,
    key?: string,
  ): z.output<S> {
    const result = schema.safeParse(output);
    if (result.success) return result.data;
    const path = result.error.issues[0]?.path.map(String).join(".") || "(root)";
    throw malformedS3Answer({ operation, bucket, key }, `a valid ${path}`);
  }

  function info(operation: string, key: string, output: unknown): BlobObjectInfo {
    const headers = parse(objectHeadersSchema, output, operation, key);
    return {
      key,
      size: headers.ContentLength,
      etag: bareEtag(headers.ETag),
      ...(headers.ContentType === undefined ? {} : { contentType: headers.ContentType }),
      customMetadata: decodeS3Metadata(headers.Metadata),
      uploaded: headers.LastModified,
    };
  }

  return {
    info,
    object(key, output) {
      const body = parse(z.object({ Body: bodySchema }), output, "GetObject", key).Body;
      return { info: info("GetObject", key, output), body };
    },
    putInfo(key, output, size, options) {
      const { ETag } = parse(putOutputSchema, output, "PutObject", key);
      // The upload answer carries no timestamp; the local clock stands in for it.
      return {
        key,
        size,
        etag: bareEtag(ETag),
        contentType: options.contentType,
        customMetadata: { ...options.customMetadata },
        uploaded: new Date(),
      };
    },
    listPage(output) {
      const page = parse(listOutputSchema, output, "ListObjectsV2");
      return {
        keys: (page.Contents ?? []).map((entry) => entry.Key),
        truncated: page.IsTruncated === true,
      };
    },
  };
}
