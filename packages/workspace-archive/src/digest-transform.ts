import { createHash } from "node:crypto";
import { Transform, type TransformCallback } from "node:stream";
import { IO_CHUNK_BYTES } from "./io-sizes.js";

/** sha256 and length of a byte stream. */
export interface StreamDigest {
  /** Lowercase hex sha256. */
  readonly sha256: string;
  readonly bytes: number;
}

/**
 * A pass-through stream that hashes and counts the bytes flowing through it, on the calling thread. Used
 * behind gzip, whose compression costs several times the hashing; a plain tar's byte stream hashes on
 * a thread of its own (`createStreamHasher`).
 */
export class DigestTransform extends Transform {
  private readonly hash = createHash("sha256");
  private bytes = 0;
  private readonly resolveDigest: (digest: StreamDigest) => void;
  /** Resolves once the last byte has passed through. */
  readonly digest: Promise<StreamDigest>;

  constructor() {
    super({ highWaterMark: IO_CHUNK_BYTES });
    let resolveDigest: (digest: StreamDigest) => void = () => undefined;
    this.digest = new Promise((resolve) => {
      resolveDigest = resolve;
    });
    this.resolveDigest = resolveDigest;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    this.resolveDigest({ sha256: this.hash.digest("hex"), bytes: this.bytes });
    callback();
  }
}
