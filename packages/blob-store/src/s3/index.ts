import type { BlobStore } from "../ports.js";
import { createS3BlobStore } from "./s3-blob-store.js";
import { type R2EnvOptions, r2OptionsFromEnv } from "./s3-options.js";

export { createS3BlobStore } from "./s3-blob-store.js";
export {
  DEFAULT_PART_SIZE_BYTES,
  DEFAULT_R2_BUCKET_KEY,
  MIN_PART_SIZE_BYTES,
  type R2EnvOptions,
  type S3BlobStoreOptions,
} from "./s3-options.js";

/**
 * An S3 store for Cloudflare R2 configured from environment variables: `R2_ACCESS_KEY_ID`,
 * `R2_SECRET_ACCESS_KEY`, `R2_ENDPOINT` and the bucket variable (`OMA_CLOUDFLARE_R2_BUCKET` unless
 * `bucketKey` names another).
 *
 * @throws InvalidConfigError listing every missing variable by name; values are never echoed.
 */
export function createR2BlobStoreFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  options: R2EnvOptions = {},
): BlobStore {
  return createS3BlobStore(r2OptionsFromEnv(env, options));
}
