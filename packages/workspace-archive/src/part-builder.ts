import { createHash } from "node:crypto";
import { END_OF_ARCHIVE_BYTES, padToBlock } from "./tar-blocks.js";
import { encodeMemberHeader, type MemberHeader } from "./tar-header.js";

/** One self-contained tar archive produced by `splitArchive`. */
export interface ArchivePart {
  /** 0-based position; parts must be extracted in this order. */
  readonly index: number;
  /** The complete tar bytes of the part, end-of-archive marker included. */
  readonly bytes: Buffer;
  /** `bytes.length`, never more than `maxPartBytes`. */
  readonly size: number;
  /** Lowercase hex sha256 of `bytes`. */
  readonly sha256: string;
  /** Members in the part. */
  readonly entries: number;
}

/**
 * Collects members into one in-memory tar part that never exceeds `maxPartBytes`. Members are copied into
 * a single buffer as they are added, so the chunks they came from are released at once and finishing
 * the part copies nothing.
 */
export class PartBuilder {
  private buffer: Buffer | null = null;
  private used = 0;
  entries = 0;

  constructor(
    readonly index: number,
    private readonly maxPartBytes: number,
  ) {}

  /** Bytes still free for members (the end marker is already reserved). */
  get remaining(): number {
    return this.maxPartBytes - END_OF_ARCHIVE_BYTES - this.used;
  }

  /** Largest member (header and padded body) any part can hold. */
  static capacity(maxPartBytes: number): number {
    return maxPartBytes - END_OF_ARCHIVE_BYTES;
  }

  /** Appends a member; `body` must hold exactly `header.size` bytes. */
  add(header: MemberHeader, body: readonly Buffer[]): void {
    const encoded = encodeMemberHeader(header);
    const padding = padToBlock(header.size) - header.size;
    const total = encoded.length + header.size + padding;
    if (total > this.remaining) throw new RangeError(`member ${header.name} does not fit the part`);
    // Every byte handed out is written here: headers and bodies copied, padding and the end marker zeroed.
    this.buffer ??= Buffer.allocUnsafe(this.maxPartBytes);
    let offset = this.used + encoded.copy(this.buffer, this.used);
    for (const chunk of body) offset += chunk.copy(this.buffer, offset);
    this.buffer.fill(0, offset, offset + padding);
    this.used += total;
    this.entries += 1;
  }

  /** Closes the part with the end-of-archive marker. */
  finish(): ArchivePart {
    const size = this.used + END_OF_ARCHIVE_BYTES;
    const buffer = this.buffer ?? Buffer.allocUnsafe(size);
    this.buffer = null;
    buffer.fill(0, this.used, size);
    const bytes = buffer.subarray(0, size);
    return {
      index: this.index,
      bytes,
      size,
      sha256: createHash("sha256").update(bytes).digest("hex"),
      entries: this.entries,
    };
  }
}
