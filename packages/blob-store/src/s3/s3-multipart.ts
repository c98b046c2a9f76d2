import type { S3Client } from "@aws-sdk/client-s3";
import { createPartReader } from "../blob-parts.js";
import { malformedS3Answer } from "./s3-errors.js";
import type { S3Sdk } from "./s3-sdk.js";

/** Everything a streamed upload sends besides the body. */
export interface S3StreamUpload {
  /** The SDK's command classes (see `loadS3Sdk`). */
  readonly sdk: Pick<
    S3Sdk,
    | "AbortMultipartUploadCommand"
    | "CompleteMultipartUploadCommand"
    | "CreateMultipartUploadCommand"
    | "PutObjectCommand"
    | "UploadPartCommand"
  >;
  readonly client: S3Client;
  readonly params: {
    readonly Bucket: string;
    readonly Key: string;
    readonly ContentType: string;
    readonly Metadata: Record<string, string>;
    readonly IfNoneMatch?: string;
  };
  readonly partSizeBytes: number;
  readonly concurrency: number;
}

/**
 * Hand-written instead of `@aws-sdk/lib-storage`'s `Upload` for memory: `Upload` copies each part into a
 * newly allocated buffer, this code fills `concurrency + 1` reused ones (`pnpm bench:s3` compares them;
 * the figures are in docs/blob-store.md).
 *
 * Uploads a stream with bounded memory. A stream that fits in one part goes up in one PutObject;
 * a longer one becomes a multipart upload of equal parts, at most `concurrency` in flight, filled
 * into at most `concurrency + 1` reused buffers. `IfNoneMatch` rides on the PutObject or on
 * CompleteMultipartUpload, where the server decides atomically. Any failure aborts the upload.
 *
 * @returns the raw answer of the request that committed the object.
 */
export async function uploadS3Stream(
  upload: S3StreamUpload,
  stream: ReadableStream<Uint8Array>,
): Promise<unknown> {
  const { client, params, partSizeBytes, concurrency } = upload;
  const {
    AbortMultipartUploadCommand,
    CompleteMultipartUploadCommand,
    CreateMultipartUploadCommand,
    PutObjectCommand,
    UploadPartCommand,
  } = upload.sdk;
  const freeBuffers: Uint8Array[] = [];
  const nextPart = createPartReader(
    stream.getReader(),
    partSizeBytes,
    () => freeBuffers.pop() ?? new Uint8Array(partSizeBytes),
  );
  let part = await nextPart();
  if (part.done)
    return client.send(
      new PutObjectCommand({ ...params, Body: part.bytes, ContentLength: part.bytes.byteLength }),
    );

  const { IfNoneMatch, ...createParams } = params;
  const { UploadId } = await client.send(new CreateMultipartUploadCommand(createParams));
  const target = { Bucket: params.Bucket, Key: params.Key, UploadId };
  const uploaded: { PartNumber: number; ETag: string }[] = [];
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  const throwIfFailed = (): void => {
    if (failure) throw failure.error;
  };
  try {
    for (let partNumber = 1; ; partNumber += 1) {
      const current = part;
      const task = client
        .send(
          new UploadPartCommand({
            ...target,
            PartNumber: partNumber,
            Body: current.bytes,
            ContentLength: current.bytes.byteLength,
          }),
        )
        .then(({ ETag }) => {
          if (!ETag)
            throw malformedS3Answer(
              { operation: "UploadPart", bucket: params.Bucket, key: params.Key },
              "an ETag",
            );
          uploaded.push({ PartNumber: partNumber, ETag });
          freeBuffers.push(current.buffer);
        })
        .catch((error: unknown) => {
          failure ??= { error };
        })
        .finally(() => inFlight.delete(task));
      inFlight.add(task);
      if (current.done) break;
      if (inFlight.size >= concurrency) await Promise.race(inFlight);
      throwIfFailed();
      part = await nextPart();
      // A stream that ends on a part boundary leaves an empty last part, which S3 does not accept.
      if (part.done && part.bytes.byteLength === 0) break;
    }
    await Promise.all(inFlight);
    throwIfFailed();
    uploaded.sort((left, right) => left.PartNumber - right.PartNumber);
    return await client.send(
      new CompleteMultipartUploadCommand({
        ...target,
        MultipartUpload: { Parts: uploaded },
        ...(IfNoneMatch ? { IfNoneMatch } : {}),
      }),
    );
  } catch (error) {
    await Promise.all(inFlight);
    await client.send(new AbortMultipartUploadCommand(target)).catch(() => undefined);
    throw error;
  }
}
