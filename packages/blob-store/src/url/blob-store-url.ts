import { fileURLToPath } from "node:url";
import { InvalidConfigError } from "@open-managed-agents/runtime-resource-contract";
import { createMemoryBlobStore } from "../memory-blob-store.js";
import { createPrefixedBlobStore } from "../prefixed-blob-store.js";
import type { BlobStore } from "../ports.js";

/** Environment variables an `s3://` URL reads: the AWS SDK's own names. */
export const S3_URL_ENV_KEYS = {
  accessKeyId: "AWS_ACCESS_KEY_ID",
  secretAccessKey: "AWS_SECRET_ACCESS_KEY",
  region: "AWS_REGION",
  endpoint: "AWS_ENDPOINT_URL_S3",
  fallbackEndpoint: "AWS_ENDPOINT_URL",
} as const;

/** Options of {@link createBlobStoreFromUrl}. */
export interface BlobStoreUrlOptions {
  /** Where `s3://` URLs read credentials, region and endpoint. @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Opens the blob store a URL names, for command lines and configuration files:
 *
 * - `file:///var/lib/openma/blobs`: the filesystem store rooted at that directory.
 * - `s3://bucket/optional/prefix`: the S3 store over `bucket` (AWS S3, Cloudflare R2 or any S3 server),
 *   keys under the prefix. Credentials come from `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`, the
 *   endpoint from `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL` (else AWS S3 in `AWS_REGION`), the region
 *   from `AWS_REGION` (default `auto`, R2's). Needs the optional peer `@aws-sdk/client-s3`.
 * - `memory:`: a new in-memory store.
 *
 * The S3 client is imported only for `s3://` URLs. Credentials in the URL itself are refused: a URL
 * ends up in logs and process listings.
 *
 * @throws InvalidConfigError for an unknown scheme, a malformed URL or missing variables (named, never valued).
 */
export async function createBlobStoreFromUrl(
  url: string,
  options: BlobStoreUrlOptions = {},
): Promise<BlobStore> {
  const parsed = parseUrl(url);
  if (parsed.username !== "" || parsed.password !== "") {
    throw new InvalidConfigError({
      message: "a blob store URL must not carry credentials; set them in the environment",
      context: { scheme: parsed.protocol },
    });
  }
  switch (parsed.protocol) {
    case "file:":
      return openFileStore(parsed);
    case "s3:":
      return openS3Store(parsed, options.env ?? process.env);
    case "memory:":
      return createMemoryBlobStore();
    default:
      throw new InvalidConfigError({
        message: `unsupported blob store URL scheme ${parsed.protocol}; use file:, s3: or memory:`,
        context: { scheme: parsed.protocol },
      });
  }
}

function parseUrl(url: string): URL {
  try {
    return new URL(url);
  } catch (cause) {
    // The text is not echoed: a malformed URL may still hold a secret.
    throw new InvalidConfigError({
      message: "not a blob store URL (file:///dir, s3://bucket/prefix or memory:)",
      cause,
    });
  }
}

async function openFileStore(url: URL): Promise<BlobStore> {
  if (url.host !== "" || url.search !== "" || url.hash !== "") {
    throw new InvalidConfigError({
      message: "a file: blob store URL is file:///absolute/dir, with no host, query or fragment",
      context: { scheme: "file:" },
    });
  }
  const { createFsBlobStore } = await import("../fs/index.js");
  return createFsBlobStore({ rootDir: fileURLToPath(url) });
}

async function openS3Store(url: URL, env: Env): Promise<BlobStore> {
  if (url.search !== "" || url.hash !== "")
    throw new InvalidConfigError({
      message: "an s3: blob store URL is s3://bucket/prefix, with no query or fragment",
      context: { scheme: "s3:" },
    });
  const missing: string[] = [S3_URL_ENV_KEYS.accessKeyId, S3_URL_ENV_KEYS.secretAccessKey].filter(
    (key) => !env[key],
  );
  const region = env[S3_URL_ENV_KEYS.region] || "auto";
  const endpoint =
    env[S3_URL_ENV_KEYS.endpoint] ||
    env[S3_URL_ENV_KEYS.fallbackEndpoint] ||
    (region === "auto" ? undefined : `https://s3.${region}.amazonaws.com`);
  if (endpoint === undefined)
    missing.push(`${S3_URL_ENV_KEYS.endpoint} (or ${S3_URL_ENV_KEYS.region} for AWS S3)`);
  if (missing.length > 0)
    throw new InvalidConfigError({
      message: `missing environment variables for ${url.protocol}//${url.host}: ${missing.join(", ")}`,
      context: { missing },
    });
  const { createS3BlobStore } = await import("../s3/index.js");
  const store = createS3BlobStore({
    bucket: url.host,
    endpoint,
    region,
    accessKeyId: env[S3_URL_ENV_KEYS.accessKeyId],
    secretAccessKey: env[S3_URL_ENV_KEYS.secretAccessKey],
  });
  const prefix = decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, "");
  return prefix === "" ? store : createPrefixedBlobStore({ store, prefix });
}
