import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import * as z from "zod";

/** s3rver's fixed credentials. */
export const S3RVER_CREDENTIALS = Object.freeze({
  accessKeyId: "S3RVER",
  secretAccessKey: "S3RVER",
});

/** A running s3rver child process. */
export interface S3rverProcess {
  readonly endpoint: string;
  /** A raw SDK client for setup and out-of-band checks. */
  readonly client: S3Client;
  /** Creates a fresh, empty bucket and returns its name. */
  createBucket(): Promise<string>;
  stop(): Promise<void>;
}

const readySchema = z.object({ port: z.number().int().positive() });
let bucketCounter = 0;

/**
 * Starts s3rver-process.mjs in its own Node process on a free loopback port with a temporary data
 * directory. The child runs with `--openssl-legacy-provider` because s3rver 3.7.1 encrypts list
 * continuation tokens with DES, which OpenSSL 3 offers only there; without it every truncated
 * ListObjectsV2 answers 500. `slowObjectWritesMs` delays the first write of each of the child's file
 * streams (see s3rver-process.mjs).
 */
export async function startS3rver(
  options: { readonly slowObjectWritesMs?: number } = {},
): Promise<S3rverProcess> {
  const directory = await mkdtemp(join(tmpdir(), "oma-s3rver-"));
  const script = fileURLToPath(new URL("./s3rver-process.mjs", import.meta.url));
  const env = {
    ...process.env,
    OMA_S3RVER_SLOW_OBJECT_WRITES_MS: String(options.slowObjectWritesMs ?? 0),
  };
  const child = spawn(process.execPath, ["--openssl-legacy-provider", script, directory], {
    stdio: ["pipe", "pipe", "inherit"],
    env,
  });
  const port = await readPort(child);
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    region: "auto",
    endpoint,
    forcePathStyle: true,
    // The SDK annotates the credentials object it is given, so it gets a copy.
    credentials: { ...S3RVER_CREDENTIALS },
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  return {
    endpoint,
    client,
    async createBucket() {
      bucketCounter += 1;
      const bucket = `suite-${process.pid}-${bucketCounter}`;
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
      return bucket;
    },
    async stop() {
      client.destroy();
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.stdin?.end();
      await exited;
      await rm(directory, { recursive: true, force: true });
    },
  };
}

async function readPort(child: ChildProcess): Promise<number> {
  if (!child.stdout) throw new Error("s3rver child has no stdout");
  const lines = createInterface({ input: child.stdout });
  const timeout = setTimeout(() => child.kill(), 30_000);
  try {
    for await (const line of lines) return readySchema.parse(JSON.parse(line)).port;
    throw new Error("s3rver exited before it listened");
  } finally {
    clearTimeout(timeout);
    lines.close();
  }
}
