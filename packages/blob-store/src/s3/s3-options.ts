import type { S3Client } from "@aws-sdk/client-s3";
import * as z from "zod";
import { InvalidConfigError, parseRecord } from "@open-managed-agents/runtime-resource-contract";

const MIB = 1024 * 1024;
/** Smallest multipart part S3 and R2 accept. */
export const MIN_PART_SIZE_BYTES = 5 * MIB;
/** Default multipart part size; memory held by a streamed upload is about `partSizeBytes × (uploadConcurrency + 1)`. */
export const DEFAULT_PART_SIZE_BYTES = 8 * MIB;

/** Options of {@link createS3BlobStore}. */
export interface S3BlobStoreOptions {
  /** Bucket name. */
  readonly bucket: string;
  /** Service endpoint, e.g. `https://<account>.r2.cloudflarestorage.com`. Required unless `client` is given. */
  readonly endpoint?: string;
  /** Signing region. @default "auto" (R2) */
  readonly region?: string;
  /** Access key id. Required unless `client` is given. */
  readonly accessKeyId?: string;
  /** Secret access key. Required unless `client` is given. */
  readonly secretAccessKey?: string;
  /** Path-style URLs (`endpoint/bucket/key`). @default true */
  readonly forcePathStyle?: boolean;
  /** Part size of streamed multipart uploads, at least 5 MiB. @default 8 MiB */
  readonly partSizeBytes?: number;
  /** Parts uploaded in parallel by a streamed upload. @default 4 */
  readonly uploadConcurrency?: number;
  /** SDK attempts per request, retries included. @default 3 */
  readonly maxAttempts?: number;
  /** A configured client to use instead of building one; endpoint and credentials are then ignored. */
  readonly client?: S3Client;
}

const optionsSchema = z.strictObject({
  bucket: z
    .string()
    .regex(
      /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/,
      "must be 3-63 lower-case letters, digits, '.' or '-'",
    ),
  endpoint: z.url({ protocol: /^https?$/ }).optional(),
  region: z.string().min(1).default("auto"),
  accessKeyId: z.string().min(1).optional(),
  secretAccessKey: z.string().min(1).optional(),
  forcePathStyle: z.boolean().default(true),
  partSizeBytes: z
    .number()
    .int()
    .min(MIN_PART_SIZE_BYTES)
    .max(5 * 1024 * MIB)
    .default(DEFAULT_PART_SIZE_BYTES),
  uploadConcurrency: z.number().int().min(1).max(16).default(4),
  maxAttempts: z.number().int().min(1).max(10).default(3),
  client: z
    .custom<S3Client>(
      (value) => typeof (value as { send?: unknown } | null)?.send === "function",
      "must be an S3Client",
    )
    .optional(),
});

/** S3 store options after validation. */
export type ParsedS3Options = z.output<typeof optionsSchema>;

/**
 * Validates {@link S3BlobStoreOptions} once.
 *
 * @throws InvalidConfigError naming the failing field, or every missing required field at once.
 */
export function parseS3Options(options: S3BlobStoreOptions): ParsedS3Options {
  const parsed = parseRecord(optionsSchema, options, {
    record: "S3 blob store options",
    code: "invalid_config",
  });
  if (!parsed.client) {
    const missing = (["endpoint", "accessKeyId", "secretAccessKey"] as const).filter(
      (name) => parsed[name] === undefined,
    );
    if (missing.length > 0) throw missingConfig("S3 blob store options", missing);
  }
  return parsed;
}

/** Default environment variable holding the R2 bucket name. */
export const DEFAULT_R2_BUCKET_KEY = "OMA_CLOUDFLARE_R2_BUCKET";

/** Options of {@link createR2BlobStoreFromEnv}. */
export interface R2EnvOptions
  extends Pick<S3BlobStoreOptions, "partSizeBytes" | "uploadConcurrency" | "maxAttempts"> {
  /** Environment variable holding the bucket name. @default "OMA_CLOUDFLARE_R2_BUCKET" */
  readonly bucketKey?: string;
}

/**
 * Reads `R2_ACCESS_KEY_ID`, `R2_SECRET_ACCESS_KEY`, `R2_ENDPOINT` and the bucket variable into S3
 * store options for R2. Values are never echoed.
 *
 * @throws InvalidConfigError listing every missing variable by name, or naming the invalid one.
 */
export function r2OptionsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  options: R2EnvOptions = {},
): S3BlobStoreOptions {
  const { bucketKey = DEFAULT_R2_BUCKET_KEY, ...tuning } = options;
  const names = ["R2_ACCESS_KEY_ID", "R2_SECRET_ACCESS_KEY", "R2_ENDPOINT", bucketKey];
  const read = (name: string): string | undefined => {
    const value = typeof env[name] === "string" ? env[name].trim() : "";
    return value === "" ? undefined : value;
  };
  const missing = names.filter((name) => read(name) === undefined);
  if (missing.length > 0) throw missingConfig("R2 environment", missing);
  const endpoint = read("R2_ENDPOINT") ?? "";
  if (!/^https?:\/\//.test(endpoint) || !URL.canParse(endpoint))
    throw invalidVariable("R2_ENDPOINT", "must be an http(s) URL");
  const bucket = read(bucketKey) ?? "";
  if (!optionsSchema.shape.bucket.safeParse(bucket).success)
    throw invalidVariable(bucketKey, "must be a valid bucket name");
  return {
    ...tuning,
    bucket,
    endpoint,
    region: "auto",
    accessKeyId: read("R2_ACCESS_KEY_ID"),
    secretAccessKey: read("R2_SECRET_ACCESS_KEY"),
  };
}

function missingConfig(source: string, missing: readonly string[]): InvalidConfigError {
  return new InvalidConfigError({
    message: `${source} is missing ${missing.join(", ")}`,
    context: { missing: [...missing] },
  });
}

function invalidVariable(name: string, reason: string): InvalidConfigError {
  return new InvalidConfigError({
    message: `environment variable ${name} ${reason}`,
    context: { variable: name, reason },
  });
}
