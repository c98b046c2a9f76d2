/** Body accepted by {@link BlobStore.put}. Streams are never buffered whole by an implementation. */
export type BlobBody = Uint8Array | string | ReadableStream<Uint8Array>;

/** Options of {@link BlobStore.put}. */
export interface BlobPutOptions {
  readonly contentType?: string;
  /** Small string metadata stored beside the object. Never secrets. */
  readonly customMetadata?: Readonly<Record<string, string>>;
  /** `"*"`: store only when no object exists at the key; otherwise `put` returns null. */
  readonly ifNoneMatch?: "*";
  /** Byte length of a stream body when known; some backends need it for a single-request upload. */
  readonly contentLength?: number;
}

/** Information about a stored object. */
export interface BlobObjectInfo {
  readonly key: string;
  readonly size: number;
  readonly etag: string;
  readonly contentType?: string;
  readonly customMetadata: Readonly<Record<string, string>>;
  readonly uploaded: Date;
}

/** A stored object with its body. Each body accessor may be called once. */
export interface BlobObject extends BlobObjectInfo {
  bytes(): Promise<Uint8Array>;
  text(): Promise<string>;
  stream(): ReadableStream<Uint8Array>;
}

/** Options of {@link BlobStore.list}. */
export interface BlobListOptions {
  readonly prefix?: string;
  /** Opaque cursor from a previous page. */
  readonly cursor?: string;
  /** Page size. @default 1000 */
  readonly limit?: number;
}

/** One page of keys, in lexicographic order. */
export interface BlobListResult {
  readonly objects: readonly BlobObjectInfo[];
  /** Present when more keys follow. */
  readonly cursor?: string;
}

/**
 * Object storage for checkpoints and outputs. Keys are `/`-separated, with no empty, `.` or `..`
 * segment and no leading slash; an invalid key throws `invalid_request`.
 */
export interface BlobStore {
  /** Stores an object. Returns null only when `ifNoneMatch` is set and the key exists. */
  put(key: string, body: BlobBody, options?: BlobPutOptions): Promise<BlobObjectInfo | null>;
  /** Null when missing. */
  get(key: string): Promise<BlobObject | null>;
  /** Null when missing. */
  head(key: string): Promise<BlobObjectInfo | null>;
  /** Deletes an object; a missing key is success. */
  delete(key: string): Promise<void>;
  list(options?: BlobListOptions): Promise<BlobListResult>;
}
