import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";
import { readAllBytes } from "@open-managed-agents/runtime-utils";
import type { BlobBody } from "./ports.js";

export { readAllBytes };

/** A put body after validation: whole bytes, or a stream with an optional promised length. */
export type NormalizedBody =
  | { readonly kind: "bytes"; readonly bytes: Uint8Array }
  | {
      readonly kind: "stream";
      readonly stream: ReadableStream<Uint8Array>;
      readonly length?: number;
    };

/**
 * Turns a {@link BlobBody} into bytes or a stream. A string becomes its UTF-8 bytes; a promised
 * `contentLength` must match a bytes body exactly.
 *
 * @throws InvalidRequestError for an unsupported body or a length mismatch.
 */
export function normalizeBody(body: BlobBody, contentLength: number | undefined): NormalizedBody {
  let bytes: Uint8Array;
  if (typeof body === "string") bytes = new TextEncoder().encode(body);
  else if (body instanceof Uint8Array) bytes = body;
  else if (isReadableStream(body)) {
    return contentLength === undefined
      ? { kind: "stream", stream: body }
      : { kind: "stream", stream: body, length: contentLength };
  } else {
    throw new InvalidRequestError({
      message: "a blob body must be a Uint8Array, a string or a ReadableStream",
    });
  }
  if (contentLength !== undefined && contentLength !== bytes.byteLength)
    throw lengthMismatch(bytes.byteLength, contentLength);
  return { kind: "bytes", bytes };
}

function isReadableStream(value: unknown): value is ReadableStream<Uint8Array> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { getReader?: unknown }).getReader === "function"
  );
}

function lengthMismatch(actual: number, promised: number): InvalidRequestError {
  return new InvalidRequestError({
    message: `the body has ${actual === -1 ? "more" : actual} bytes but contentLength promised ${promised}`,
    context: { promised, ...(actual === -1 ? {} : { actual }) },
  });
}

/** A stream that counts its bytes, plus the typed error it failed with, if any. */
export interface CheckedStream {
  readonly stream: ReadableStream<Uint8Array>;
  /** Bytes passed through so far. */
  bytesRead(): number;
  /** The validation error the stream failed with; implementations rethrow it in place of wrapper errors. */
  failure(): InvalidRequestError | undefined;
}

/**
 * Passes a body stream through, checking every chunk is a Uint8Array and the total matches
 * `promisedLength` when given. A violation errors the stream with an InvalidRequestError.
 */
export function checkBodyStream(
  source: ReadableStream<Uint8Array>,
  promisedLength?: number,
): CheckedStream {
  let total = 0;
  let failed: InvalidRequestError | undefined;
  const fail = (
    controller: TransformStreamDefaultController<Uint8Array>,
    error: InvalidRequestError,
  ): void => {
    failed = error;
    controller.error(error);
  };
  const stream = source.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (!(chunk instanceof Uint8Array))
          return fail(
            controller,
            new InvalidRequestError({ message: "a body stream must yield Uint8Array chunks" }),
          );
        total += chunk.byteLength;
        if (promisedLength !== undefined && total > promisedLength)
          return fail(controller, lengthMismatch(-1, promisedLength));
        if (chunk.byteLength > 0) controller.enqueue(chunk);
      },
      flush(controller) {
        if (promisedLength !== undefined && total !== promisedLength)
          fail(controller, lengthMismatch(total, promisedLength));
      },
    }),
  );
  return { stream, bytesRead: () => total, failure: () => failed };
}

/**
 * A body stream's chunks as they are read. A byte stream is read in BYOB mode into one buffer that goes back
 * and forth between reader and stream: each chunk is a view valid only until the next one is asked for, so a
 * body of any size costs one buffer rather than a fresh chunk per read (chunks that pile up as garbage between
 * collections whenever a process allocates little else). Any other stream's chunks come as it makes them.
 * Leaving early cancels the body.
 */
export async function* bodyChunks(
  source: ReadableStream<Uint8Array>,
  chunkBytes = 256 * 1024,
): AsyncGenerator<Uint8Array> {
  const reader = byobReaderOf(source);
  if (!reader) {
    yield* source as unknown as AsyncIterable<Uint8Array>;
    return;
  }
  let buffer = new ArrayBuffer(chunkBytes);
  let ended = false;
  try {
    for (;;) {
      const { done, value } = await reader.read(new Uint8Array(buffer));
      if (done) {
        ended = true;
        return;
      }
      buffer = value.buffer as ArrayBuffer;
      yield value;
    }
  } finally {
    if (!ended) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/**
 * Reads a body of exactly `into.byteLength` bytes into `into`: straight from the source in BYOB mode when the
 * body is a byte stream, chunk by chunk otherwise. Answers the filled bytes (in BYOB mode the memory comes back
 * in a new ArrayBuffer and `into` is left detached) or null when the body held fewer or more bytes; a longer
 * body is cancelled.
 */
export async function readBodyInto(
  source: ReadableStream<Uint8Array>,
  into: Uint8Array,
): Promise<Uint8Array | null> {
  const size = into.byteLength;
  const reader = byobReaderOf(source);
  if (!reader) {
    let filled = 0;
    for await (const chunk of source as unknown as AsyncIterable<Uint8Array>) {
      if (filled + chunk.byteLength > size) return null;
      into.set(chunk, filled);
      filled += chunk.byteLength;
    }
    return filled === size ? into : null;
  }
  let bytes = into;
  let filled = 0;
  let ended = false;
  try {
    while (filled < size) {
      const { done, value } = await reader.read(
        new Uint8Array(bytes.buffer, bytes.byteOffset + filled, size - filled),
      );
      if (value) bytes = new Uint8Array(value.buffer, bytes.byteOffset, size);
      if (done) {
        ended = true;
        return null;
      }
      filled += value.byteLength;
    }
    // One more read, into a byte of its own, must find the end: a longer body is refused.
    const { done } = await reader.read(new Uint8Array(1));
    ended = done;
    return done ? bytes : null;
  } finally {
    if (!ended) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** A BYOB reader of `source` when it is a byte stream; null for any other. */
function byobReaderOf(source: ReadableStream<Uint8Array>): ReadableStreamBYOBReader | null {
  try {
    return source.getReader({ mode: "byob" });
  } catch (error) {
    if (error instanceof TypeError) return null;
    throw error;
  }
}

/**
 * {@link bodyChunks} with the checks of {@link checkBodyStream} (every chunk a Uint8Array, the total the
 * promised length) and without a stream in between; empty chunks are skipped. A violation throws the
 * InvalidRequestError.
 */
export async function* checkedChunks(
  source: ReadableStream<Uint8Array>,
  promisedLength?: number,
): AsyncGenerator<Uint8Array> {
  let total = 0;
  for await (const chunk of bodyChunks(source) as AsyncIterable<unknown>) {
    if (!(chunk instanceof Uint8Array))
      throw new InvalidRequestError({ message: "a body stream must yield Uint8Array chunks" });
    total += chunk.byteLength;
    if (promisedLength !== undefined && total > promisedLength)
      throw lengthMismatch(-1, promisedLength);
    if (chunk.byteLength > 0) yield chunk;
  }
  if (promisedLength !== undefined && total !== promisedLength)
    throw lengthMismatch(total, promisedLength);
}

/** A stream over bytes already in memory, in chunks of at most `chunkSize`. */
export function bytesToStream(
  bytes: Uint8Array,
  chunkSize = 64 * 1024,
): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      const end = Math.min(offset + chunkSize, bytes.byteLength);
      controller.enqueue(bytes.slice(offset, end));
      offset = end;
    },
  });
}
