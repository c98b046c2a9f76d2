export {
  type R2BindingBlobStoreOptions,
  createR2BindingBlobStore,
} from "./r2-binding-blob-store.js";
export type {
  BlobLike,
  FixedLengthStreamConstructor,
  FixedLengthStreamLike,
  R2BucketLike,
  R2ConditionalLike,
  R2MultipartUploadLike,
  R2ObjectBodyLike,
  R2ObjectLike,
  R2UploadedPartLike,
  R2ValueLike,
  R2WriteOptionsLike,
  ReadableStreamLike,
} from "./r2-binding-types.js";
