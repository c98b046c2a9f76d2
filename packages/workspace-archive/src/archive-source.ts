import { createReadStream } from "node:fs";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";
import { IO_CHUNK_BYTES } from "./io-sizes.js";

/** An archive in a local file. `extractArchive` reads it with reused buffers (no page faults per chunk). */
export interface ArchiveFile {
  readonly file: string;
}

/**
 * Anything an archive can be read from: a Node stream, a web `ReadableStream`, an async iterable of
 * byte chunks, the bytes themselves (for example a part from `splitArchive`), or `{file}`.
 */
export type ArchiveSource =
  | ArchiveFile
  | Readable
  | NodeJS.ReadableStream
  | ReadableStream<Uint8Array>
  | WebReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array>
  | Uint8Array;

/** Adapts any {@link ArchiveSource} to a Node `Readable` of bytes. */
export function toNodeReadable(source: ArchiveSource): Readable {
  if (source instanceof Readable) return source;
  if (source instanceof Uint8Array) return Readable.from([toBuffer(source)], { objectMode: false });
  if (isArchiveFile(source))
    return createReadStream(source.file, { highWaterMark: IO_CHUNK_BYTES });
  if (isWebStream(source))
    return Readable.fromWeb(source as WebReadableStream<Uint8Array>, { objectMode: false });
  if (isAsyncIterable(source)) return Readable.from(mapToBuffers(source), { objectMode: false });
  if (typeof (source as NodeJS.ReadableStream).pipe === "function")
    return new Readable().wrap(source as NodeJS.ReadableStream);
  throw new InvalidRequestError({
    message: "archive source must be a stream, an async iterable of bytes or a Uint8Array",
  });
}

/** Adapts a Node `Readable` of bytes to a web `ReadableStream<Uint8Array>` (for `fetch` bodies). */
export function toWebStream(readable: Readable): ReadableStream<Uint8Array> {
  return Readable.toWeb(readable) as unknown as ReadableStream<Uint8Array>;
}

/** Views a Uint8Array as a Buffer without copying. */
export function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** True for the `{file}` form of {@link ArchiveSource}. */
export function isArchiveFile(value: unknown): value is ArchiveFile {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { file?: unknown }).file === "string" &&
    !(value instanceof Readable)
  );
}

function isWebStream(value: unknown): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { getReader?: unknown }).getReader === "function"
  );
}

function isAsyncIterable(value: unknown): value is AsyncIterable<Uint8Array> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Record<symbol, unknown>)[Symbol.asyncIterator] === "function"
  );
}

async function* mapToBuffers(source: AsyncIterable<Uint8Array>): AsyncGenerator<Buffer> {
  for await (const chunk of source) yield toBuffer(chunk);
}
