// One measured upload, in a fresh process so its RSS growth is its own. Prints one JSON line.
import { S3Client } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { createS3BlobStore } from "../src/s3/index.js";
import { deterministicStream } from "../test/support/deterministic-bytes.js";
import { startRssSampler } from "../test/support/rss-sampler.js";

const [variant, endpoint, bucket, bytesText] = process.argv.slice(2);
const bytes = Number(bytesText);
const credentials = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };
const partSizeBytes = 8 * 1024 * 1024;
const concurrency = 4;
const key = `bench/${variant}-${process.pid}.bin`;

const sampler = startRssSampler(5);
const started = performance.now();
if (variant === "hand-written") {
  const store = createS3BlobStore({
    bucket: bucket as string,
    endpoint,
    ...credentials,
    partSizeBytes,
    uploadConcurrency: concurrency,
  });
  await store.put(key, deterministicStream(bytes, 7));
} else if (variant === "lib-storage") {
  const client = new S3Client({
    region: "auto",
    endpoint,
    forcePathStyle: true,
    credentials: { ...credentials },
    requestChecksumCalculation: "WHEN_REQUIRED",
  });
  await new Upload({
    client,
    params: { Bucket: bucket, Key: key, Body: deterministicStream(bytes, 7) },
    partSize: partSizeBytes,
    queueSize: concurrency,
  }).done();
  client.destroy();
} else {
  throw new Error(`unknown variant ${variant}`);
}
const elapsedMs = performance.now() - started;
const { peakGrowthBytes } = sampler.stop();
process.stdout.write(`${JSON.stringify({ variant, elapsedMs, peakGrowthBytes })}\n`);
