// Structural types for the parts of the Workers R2 binding this package calls. A real `R2Bucket`
// from `@cloudflare/workers-types` satisfies them (a type test checks it); nothing here imports
// Node or workerd modules. Stream and blob types are structural because workerd's declarations
// differ nominally from the ones in TypeScript's and Node's libraries.

/** A Web `ReadableStream` as any runtime declares it. */
export interface ReadableStreamLike {
  readonly locked: boolean;
  cancel(reason?: unknown): Promise<void>;
  getReader(): unknown;
}

/** A `Blob` as any runtime declares it. */
export interface BlobLike {
  readonly size: number;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** A value the binding accepts as an object or part body. */
export type R2ValueLike = ReadableStreamLike | ArrayBuffer | ArrayBufferView | string | BlobLike;

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
  readonly body: ReadableStreamLike;
}

/** Options the adapter passes to `put` and `createMultipartUpload`. */
export interface R2WriteOptionsLike {
  httpMetadata?: { contentType?: string };
  customMetadata?: Record<string, string>;
}

/** The precondition the adapter sends: `etagDoesNotMatch: "*"` is `If-None-Match: *`. */
export interface R2ConditionalLike {
  etagDoesNotMatch?: string;
}

/** One uploaded part of a multipart upload. */
export interface R2UploadedPartLike {
  partNumber: number;
  etag: string;
}

/** A multipart upload in progress. */
export interface R2MultipartUploadLike {
  uploadPart(partNumber: number, value: R2ValueLike): Promise<R2UploadedPartLike>;
  abort(): Promise<void>;
  complete(uploadedParts: R2UploadedPartLike[]): Promise<R2ObjectLike>;
}

/** The R2 bucket binding (`env.BUCKET` inside a Worker), as far as the adapter uses it. */
export interface R2BucketLike {
  head(key: string): Promise<R2ObjectLike | null>;
  get(key: string): Promise<R2ObjectBodyLike | null>;
  put(
    key: string,
    value: R2ValueLike | null,
    options?: R2WriteOptionsLike & { onlyIf?: R2ConditionalLike },
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
  readonly readable: ReadableStream<Uint8Array>;
  readonly writable: WritableStream<Uint8Array>;
}

/** Constructor of {@link FixedLengthStreamLike}, a global inside workerd. */
export type FixedLengthStreamConstructor = new (expectedLength: number) => FixedLengthStreamLike;
