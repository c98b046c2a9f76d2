export type {
  BlobBody,
  BlobListOptions,
  BlobListResult,
  BlobObject,
  BlobObjectInfo,
  BlobPutOptions,
  BlobStore,
} from "./ports.js";
export {
  MAX_BLOB_KEY_BYTES,
  compareBlobKeys,
  validateBlobKey,
  validateBlobPrefix,
} from "./blob-key.js";
export { DEFAULT_CONTENT_TYPE, MAX_CUSTOM_METADATA_BYTES, MAX_LIST_LIMIT } from "./blob-options.js";
export { createMemoryBlobStore } from "./memory-blob-store.js";
export { type PrefixedBlobStoreOptions, createPrefixedBlobStore } from "./prefixed-blob-store.js";
export { bodyChunks, readBodyInto } from "./blob-body.js";
