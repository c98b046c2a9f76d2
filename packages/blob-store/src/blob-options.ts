import * as z from "zod";
import { LimitExceededError, parseRecord } from "@open-managed-agents/runtime-resource-contract";
import { utf8Length, validateBlobPrefix } from "./blob-key.js";

/** Content type stored when a put names none. */
export const DEFAULT_CONTENT_TYPE = "application/octet-stream";
/** Largest total of custom metadata names and values, in UTF-8 bytes (the S3 and R2 limit). */
export const MAX_CUSTOM_METADATA_BYTES = 2048;
/** Largest page a list returns. */
export const MAX_LIST_LIMIT = 1000;

const putOptionsSchema = z.strictObject({
  contentType: z
    .string()
    .min(1)
    .max(256)
    .regex(/^[\x20-\x7e]+$/, "must be printable ASCII")
    .optional(),
  customMetadata: z
    .record(
      z.string().regex(/^[A-Za-z0-9._-]+$/, "names may use letters, digits, '.', '_' and '-'"),
      z.string(),
    )
    .optional(),
  ifNoneMatch: z.literal("*").optional(),
  contentLength: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
});

/** Put options after validation, with defaults applied. */
export interface ParsedPutOptions {
  readonly contentType: string;
  readonly customMetadata: Readonly<Record<string, string>>;
  readonly ifNoneMatch: boolean;
  readonly contentLength?: number;
}

/**
 * Validates {@link BlobPutOptions}: printable-ASCII content type, header-safe metadata names, at most
 * {@link MAX_CUSTOM_METADATA_BYTES} of metadata, `ifNoneMatch` only `"*"`.
 *
 * @throws InvalidRequestError for a malformed option, LimitExceededError for oversize metadata.
 */
export function parsePutOptions(options: unknown): ParsedPutOptions {
  const parsed = parseRecord(putOptionsSchema, options ?? {}, { record: "blob put options" });
  const customMetadata = { ...parsed.customMetadata };
  const metadataBytes = Object.entries(customMetadata).reduce(
    (total, [name, value]) => total + utf8Length(name) + utf8Length(value),
    0,
  );
  if (metadataBytes > MAX_CUSTOM_METADATA_BYTES) {
    throw new LimitExceededError({
      message: `custom metadata takes ${metadataBytes} bytes; the limit is ${MAX_CUSTOM_METADATA_BYTES}`,
      context: { limit: MAX_CUSTOM_METADATA_BYTES, actual: metadataBytes },
    });
  }
  return {
    contentType: parsed.contentType ?? DEFAULT_CONTENT_TYPE,
    customMetadata,
    ifNoneMatch: parsed.ifNoneMatch === "*",
    ...(parsed.contentLength === undefined ? {} : { contentLength: parsed.contentLength }),
  };
}

const listOptionsSchema = z.strictObject({
  prefix: z.string().optional(),
  cursor: z.string().min(1).max(4096).optional(),
  limit: z.number().int().min(1).max(MAX_LIST_LIMIT).optional(),
});

/** List options after validation, with defaults applied. */
export interface ParsedListOptions {
  readonly prefix: string;
  readonly cursor?: string;
  readonly limit: number;
}

/**
 * Validates {@link BlobListOptions}: a prefix with the text rules of a key, a non-empty cursor, and a
 * limit from 1 to {@link MAX_LIST_LIMIT}.
 *
 * @throws InvalidRequestError naming the failing option.
 */
export function parseListOptions(options: unknown): ParsedListOptions {
  const parsed = parseRecord(listOptionsSchema, options ?? {}, { record: "blob list options" });
  return {
    prefix: parsed.prefix === undefined ? "" : validateBlobPrefix(parsed.prefix),
    limit: parsed.limit ?? MAX_LIST_LIMIT,
    ...(parsed.cursor === undefined ? {} : { cursor: parsed.cursor }),
  };
}
