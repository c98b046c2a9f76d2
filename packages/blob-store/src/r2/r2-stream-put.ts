import { UnsupportedOperationError } from "@open-managed-agents/runtime-resource-contract";
import { checkBodyStream } from "../blob-body.js";
import { createPartReader } from "../blob-parts.js";
import type {
  FixedLengthStreamConstructor,
  R2BucketLike,
  R2ConditionalLike,
  R2ObjectLike,
  R2UploadedPartLike,
  R2WriteOptionsLike,
} from "./r2-binding-types.js";

/** How a stream body reaches R2. */
export interface R2StreamPut {
  readonly bucket: R2BucketLike;
  readonly key: string;
  readonly stream: ReadableStream<Uint8Array>;
  readonly length: number | undefined;
  readonly write: R2WriteOptionsLike;
  readonly onlyIf: R2ConditionalLike | undefined;
  readonly partSizeBytes: number;
}

/**
 * Puts a stream, which R2 accepts only with a known length. With `length` (and inside workerd) the
 * stream passes through a `FixedLengthStream` to one put. Without it, up to one part is buffered:
 * a shorter stream goes up in one put; a longer one becomes a multipart upload of equal parts, so
 * memory stays near one part. A multipart upload cannot be conditional, so a longer stream with
 * `ifNoneMatch` is refused with `unsupported_operation` (pass `contentLength` instead).
 */
export async function putR2Stream(put: R2StreamPut): Promise<R2ObjectLike | null> {
  const checked = checkBodyStream(put.stream, put.length);
  const FixedLengthStream = (globalThis as { FixedLengthStream?: FixedLengthStreamConstructor })
    .FixedLengthStream;
  try {
    if (put.length !== undefined && FixedLengthStream)
      return await putFixedLength(put, checked.stream, new FixedLengthStream(put.length));
    return await putInParts(put, checked.stream.getReader());
  } catch (error) {
    throw checked.failure() ?? error;
  }
}

async function putFixedLength(
  put: R2StreamPut,
  stream: ReadableStream<Uint8Array>,
  fixed: InstanceType<FixedLengthStreamConstructor>,
): Promise<R2ObjectLike | null> {
  const abort = new AbortController();
  const piping = stream.pipeTo(fixed.writable, { signal: abort.signal }).then(
    () => undefined,
    (error: unknown) => error,
  );
  const stored = await put.bucket.put(put.key, fixed.readable, {
    ...put.write,
    ...(put.onlyIf ? { onlyIf: put.onlyIf } : {}),
  });
  // A failed precondition may leave the body unread; aborting the pipe cancels the caller's stream.
  if (stored === null) abort.abort();
  const pipeError = await piping;
  if (stored !== null && pipeError !== undefined) throw pipeError;
  return stored;
}

async function putInParts(
  put: R2StreamPut,
  reader: ReadableStreamDefaultReader<Uint8Array>,
): Promise<R2ObjectLike | null> {
  // Parts upload one at a time, so one buffer serves them all.
  const buffer = new Uint8Array(put.partSizeBytes);
  const nextPart = createPartReader(reader, put.partSizeBytes, () => buffer);
  const first = await nextPart();
  if (first.done)
    return put.bucket.put(put.key, first.bytes, {
      ...put.write,
      ...(put.onlyIf ? { onlyIf: put.onlyIf } : {}),
    });
  if (put.onlyIf) {
    await reader.cancel();
    throw new UnsupportedOperationError({
      message: `a conditional put of a stream longer than ${put.partSizeBytes} bytes needs contentLength on the R2 binding`,
      context: { key: put.key, partSizeBytes: put.partSizeBytes },
    });
  }
  const upload = await put.bucket.createMultipartUpload(put.key, put.write);
  try {
    const parts: R2UploadedPartLike[] = [];
    for (let part = first; ; part = await nextPart()) {
      if (part.bytes.byteLength > 0 || parts.length === 0)
        parts.push(await upload.uploadPart(parts.length + 1, part.bytes));
      if (part.done) break;
    }
    return await upload.complete(parts);
  } catch (error) {
    await upload.abort().catch(() => undefined);
    throw error;
  }
}
