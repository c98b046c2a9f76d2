export { type FsBlobStoreOptions, createFsBlobStore } from "./fs-blob-store.js";
export { MAX_FS_SEGMENT_BYTES } from "./fs-key-paths.js";
