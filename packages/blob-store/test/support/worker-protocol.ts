import * as z from "zod";
import type { BlobObjectInfo } from "../../src/index.js";

// The test-only HTTP protocol between Node and the Worker that hosts the R2 binding adapter. Each
// call is `POST /<method>` with the arguments JSON-encoded in the `x-call` header; put bodies travel
// as the request body, get bodies as the response body.

/** Header carrying the call's arguments. */
export const CALL_HEADER = "x-call";
/** Header carrying a get's object info beside the streamed body. */
export const RESULT_HEADER = "x-result";

/** Arguments of one call. */
export interface WorkerCall {
  readonly key?: unknown;
  readonly options?: unknown;
  readonly bodyKind?: "string" | "bytes" | "stream" | "value";
  /** A body that is none of the supported kinds, sent as JSON so the adapter can reject it. */
  readonly body?: unknown;
}

/** Encodes a value into a header-safe string (JSON escapes lone surrogates, so this cannot throw). */
export function encodeHeaderJson(value: unknown): string {
  return encodeURIComponent(JSON.stringify(value ?? null));
}

/** Decodes {@link encodeHeaderJson}. */
export function decodeHeaderJson(header: string | null): unknown {
  return header === null ? null : JSON.parse(decodeURIComponent(header));
}

/** Object info as JSON. */
export function infoToJson(info: BlobObjectInfo): Record<string, unknown> {
  return { ...info, uploaded: info.uploaded.toISOString() };
}

const infoJsonSchema = z.object({
  key: z.string(),
  size: z.number(),
  etag: z.string(),
  contentType: z.string().optional(),
  customMetadata: z.record(z.string(), z.string()),
  uploaded: z.iso.datetime(),
});

/** Parses object info sent by the Worker. */
export function infoFromJson(json: unknown): BlobObjectInfo {
  const parsed = infoJsonSchema.parse(json);
  return { ...parsed, uploaded: new Date(parsed.uploaded) };
}

/** A list page as the Worker sends it. */
export const listJsonSchema = z.object({
  objects: z.array(z.unknown()),
  cursor: z.string().optional(),
});
