// Structural types for the parts of the Workers R2 binding this package calls. A real `R2Bucket`
// from `@cloudflare/workers-types` satisfies them; nothing here imports Node or workerd modules.

/** Object metadata as the binding returns it. */
export interface R2ObjectLike {
  readonly key: string;
  readonly size: number;
  readonly etag: string;
  readonly uploaded: Date;
  readonly httpMetadata?: { readonly contentType?: string };
  readonly customMetadata?: Record<string, string>;
}

/** An object with its body. */
export interface R2ObjectBodyLike extends R2ObjectLike {
  readonly body: ReadableStream;
}

/** Options the adapter passes to `put` and `createMultipartUpload`. */
export interface R2WriteOptionsLike {
  httpMetadata?: { contentType?: string };
  customMetadata?: Record<string, string>;
}

/** One uploaded part of a multipart upload. */
export interface R2UploadedPartLike {
  partNumber: number;
  etag: string;
}

/** A multipart upload in progress. */
export interface R2MultipartUploadLike {
  uploadPart(partNumber: number, value: ArrayBuffer | ArrayBufferView | string | ReadableStream): Promise<R2UploadedPartLike>;
  abort(): Promise<void>;
  complete(uploadedParts: R2UploadedPartLike[]): Promise<R2ObjectLike>;
}

/** The R2 bucket binding (`env.BUCKET` inside a Worker), as far as the adapter uses it. */
export interface R2BucketLike {
  head(key: string): Promise<R2ObjectLike | null>;
  get(key: string): Promise<R2ObjectBodyLike | null>;
  put(
    key: string,
    value: ReadableStream | ArrayBuffer | ArrayBufferView | string | null,
    options?: R2WriteOptionsLike & { onlyIf?: Headers },
  ): Promise<R2ObjectLike | null>;
  delete(keys: string | string[]): Promise<void>;
  list(options?: {
    prefix?: string;
    cursor?: string;
    limit?: number;
    include?: ("httpMetadata" | "customMetadata")[];
  }): Promise<{ objects: R2ObjectLike[]; truncated: boolean; cursor?: string }>;
  createMultipartUpload(key: string, options?: R2WriteOptionsLike): Promise<R2MultipartUploadLike>;
}

/** workerd's `FixedLengthStream`: an identity stream that promises its total length to R2. */
export interface FixedLengthStreamLike {
  readonly readable: ReadableStream;
  readonly writable: WritableStream;
}

/** Constructor of {@link FixedLengthStreamLike}, a global inside workerd. */
export type FixedLengthStreamConstructor = new (expectedLength: number) => FixedLengthStreamLike;
