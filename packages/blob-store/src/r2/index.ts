export { type R2BindingBlobStoreOptions, createR2BindingBlobStore } from "./r2-binding-blob-store.js";
export type {
  FixedLengthStreamConstructor,
  FixedLengthStreamLike,
  R2BucketLike,
  R2MultipartUploadLike,
  R2ObjectBodyLike,
  R2ObjectLike,
  R2UploadedPartLike,
  R2WriteOptionsLike,
} from "./r2-binding-types.js";
