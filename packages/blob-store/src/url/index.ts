export {
  type BlobStoreUrlOptions,
  S3_URL_ENV_KEYS,
  createBlobStoreFromUrl,
} from "./blob-store-url.js";
