import type { S3Client } from "@aws-sdk/client-s3";
import { validateBlobKey } from "../blob-key.js";
import { checkBodyStream, normalizeBody } from "../blob-body.js";
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
import { mapS3Error, s3ErrorName, s3Status } from "./s3-errors.js";
import { encodeS3Metadata } from "./s3-metadata.js";
import { type S3BlobStoreOptions, parseS3Options } from "./s3-options.js";
import { type S3Answers, createS3Answers } from "./s3-answers.js";
import { uploadS3Stream } from "./s3-multipart.js";
import { type S3Sdk, loadS3Sdk } from "./s3-sdk.js";

// HEADs run this many at a time to fill in metadata for a listed page.
const LIST_HEAD_CONCURRENCY = 8;

/**
 * A {@link BlobStore} over the S3 API (R2, S3 and compatible servers). Bytes and strings go up in one
 * PutObject; streams go up in parts (see {@link uploadS3Stream}) holding about `partSizeBytes ×
 * (uploadConcurrency + 1)` in memory. `ifNoneMatch` is sent as `If-None-Match: *` and a 412 answer
 * becomes null, so the server decides atomically. Listing pages with `StartAfter` (the cursor is the
 * last key of the page) and HEADs each listed key for its metadata.
 *
 * @throws InvalidConfigError for invalid options, naming every missing required field.
 */
export function createS3BlobStore(options: S3BlobStoreOptions): BlobStore {
  const parsed = parseS3Options(options);
  // The SDK is imported with the first call (see loadS3Sdk), and the client built then, once.
  let connection: Promise<Connection> | undefined;
  const connect = () =>
    (connection ??= loadS3Sdk().then((sdk) => ({
      sdk,
      client:
        parsed.client ??
        new sdk.S3Client({
          region: parsed.region,
          endpoint: parsed.endpoint,
          forcePathStyle: parsed.forcePathStyle,
          credentials: {
            accessKeyId: parsed.accessKeyId ?? "",
            secretAccessKey: parsed.secretAccessKey ?? "",
          },
          maxAttempts: parsed.maxAttempts,
          // R2 and other S3-compatible servers reject or mis-store the SDK's default aws-chunked checksums.
          requestChecksumCalculation: "WHEN_REQUIRED",
          responseChecksumValidation: "WHEN_REQUIRED",
        }),
    })));
  const bucket = parsed.bucket;
  const secrets = [parsed.accessKeyId, parsed.secretAccessKey].filter(
    (value): value is string => value !== undefined,
  );
  const answers: S3Answers = createS3Answers(bucket);

  async function call<T>(
    operation: string,
    key: string | undefined,
    run: (connection: Connection) => Promise<T>,
  ): Promise<T> {
    const connected = await connect();
    try {
      return await run(connected);
    } catch (error) {
      throw mapS3Error(error, { operation, bucket, key, secrets });
    }
  }

  async function head(key: string): Promise<BlobObjectInfo | null> {
    return call("HeadObject", key, async ({ sdk, client }) => {
      try {
        return answers.info(
          "HeadObject",
          key,
          await client.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: key })),
        );
      } catch (error) {
        if (s3Status(error) === 404 && s3ErrorName(error) !== "NoSuchBucket") return null;
        throw error;
      }
    });
  }

  async function putStream(
    { sdk, client }: Connection,
    key: string,
    stream: ReadableStream<Uint8Array>,
    length: number | undefined,
    putOptions: ParsedPutOptions,
  ): Promise<BlobObjectInfo | null> {
    // Uploading a large stream only to receive 412 wastes the transfer; the server still decides.
    if (putOptions.ifNoneMatch && (await head(key))) {
      await stream.cancel().catch(() => undefined);
      return null;
    }
    const checked = checkBodyStream(stream, length);
    try {
      const upload = {
        sdk,
        client,
        params: putParams(bucket, key, putOptions),
        partSizeBytes: parsed.partSizeBytes,
        concurrency: parsed.uploadConcurrency,
      };
      const output = await uploadS3Stream(upload, checked.stream);
      return answers.putInfo(key, output, checked.bytesRead(), putOptions);
    } catch (error) {
      throw checked.failure() ?? error;
    }
  }

  return {
    async put(
      key: string,
      body: BlobBody,
      rawOptions?: BlobPutOptions,
    ): Promise<BlobObjectInfo | null> {
      validateBlobKey(key);
      const putOptions = parsePutOptions(rawOptions);
      const normalized = normalizeBody(body, putOptions.contentLength);
      return call("PutObject", key, async (connected) => {
        try {
          if (normalized.kind === "stream")
            return await putStream(
              connected,
              key,
              normalized.stream,
              normalized.length,
              putOptions,
            );
          const output = await connected.client.send(
            new connected.sdk.PutObjectCommand({
              ...putParams(bucket, key, putOptions),
              Body: normalized.bytes,
              ContentLength: normalized.bytes.byteLength,
            }),
          );
          return answers.putInfo(key, output, normalized.bytes.byteLength, putOptions);
        } catch (error) {
          if (putOptions.ifNoneMatch && s3Status(error) === 412) return null;
          throw error;
        }
      });
    },

    async get(key: string): Promise<BlobObject | null> {
      validateBlobKey(key);
      return call("GetObject", key, async ({ sdk, client }) => {
        try {
          const output = await client.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: key }));
          const { info, body } = answers.object(key, output);
          return createBlobObject(
            info,
            () => body.transformToWebStream() as ReadableStream<Uint8Array>,
          );
        } catch (error) {
          if (s3Status(error) === 404 && s3ErrorName(error) !== "NoSuchBucket") return null;
          throw error;
        }
      });
    },

    async head(key: string): Promise<BlobObjectInfo | null> {
      validateBlobKey(key);
      return head(key);
    },

    async delete(key: string): Promise<void> {
      validateBlobKey(key);
      await call("DeleteObject", key, ({ sdk, client }) =>
        client.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: key })),
      );
    },

    async list(rawOptions?: BlobListOptions): Promise<BlobListResult> {
      const { prefix, cursor, limit } = parseListOptions(rawOptions);
      const page = await call("ListObjectsV2", undefined, async ({ sdk, client }) =>
        answers.listPage(
          await client.send(
            new sdk.ListObjectsV2Command({
              Bucket: bucket,
              MaxKeys: limit,
              ...(prefix ? { Prefix: prefix } : {}),
              ...(cursor ? { StartAfter: cursor } : {}),
            }),
          ),
        ),
      );
      const infos: (BlobObjectInfo | null)[] = [];
      for (let index = 0; index < page.keys.length; index += LIST_HEAD_CONCURRENCY) {
        // A key deleted between the listing and its HEAD is left out of the page.
        infos.push(
          ...(await Promise.all(
            page.keys.slice(index, index + LIST_HEAD_CONCURRENCY).map((key) => head(key)),
          )),
        );
      }
      const objects = infos.filter((info): info is BlobObjectInfo => info !== null);
      const last = page.keys.at(-1);
      return page.truncated && last !== undefined ? { objects, cursor: last } : { objects };
    },
  };
}

/** The SDK and the client a store's calls go through, once the first call loaded them. */
interface Connection {
  readonly sdk: S3Sdk;
  readonly client: S3Client;
}

function putParams(bucket: string, key: string, options: ParsedPutOptions) {
  return {
    Bucket: bucket,
    Key: key,
    ContentType: options.contentType,
    Metadata: encodeS3Metadata(options.customMetadata),
    ...(options.ifNoneMatch ? { IfNoneMatch: "*" } : {}),
  };
}
