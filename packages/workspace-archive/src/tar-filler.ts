import { ReadAhead } from "./read-ahead.js";
import type { TarSegment } from "./tar-segments.js";

/**
 * Fills caller-provided buffers from a sequence of tar segments: byte segments are copied, file segments
 * come through a {@link ReadAhead} of reused buffers, so disk reads overlap with the caller's hashing and
 * nothing is allocated per chunk. A file that ends early is padded with zeros, since its header already
 * promised its size.
 */
export class TarFiller {
  private segment: TarSegment | null = null;
  /** Position inside the current segment: buffer index and offset, or file offset. */
  private index = 0;
  private offset = 0;
  private done = false;
  private readonly readAhead = new ReadAhead();

  constructor(private readonly segments: AsyncGenerator<TarSegment>) {}

  /** Fills `view` as far as the stream goes; resolves with the byte count, 0 at the end. */
  async fill(view: Uint8Array): Promise<number> {
    let filled = 0;
    while (filled < view.length) {
      if (this.segment === null && !(await this.advance())) break;
      const segment = this.segment as TarSegment;
      if (segment.kind === "bytes") filled += this.copyBytes(segment.buffers, view, filled);
      else filled += await this.readFile(segment, view, filled);
    }
    return filled;
  }

  /** Stops early: closes the open file and the walk. */
  async close(): Promise<void> {
    this.done = true;
    await this.readAhead.settle();
    await this.segments.return(undefined);
  }

  private async advance(): Promise<boolean> {
    if (this.done) return false;
    const next = await this.segments.next();
    if (next.done) {
      this.done = true;
      return false;
    }
    this.segment = next.value;
    this.index = 0;
    this.offset = 0;
    if (this.segment.kind === "file") this.readAhead.begin(this.segment.handle, this.segment.size);
    return true;
  }

  private copyBytes(buffers: readonly Buffer[], view: Uint8Array, at: number): number {
    let copied = 0;
    while (this.index < buffers.length && at + copied < view.length) {
      const source = buffers[this.index] as Buffer;
      const count = source.copy(
        view,
        at + copied,
        this.offset,
        Math.min(source.length, this.offset + view.length - at - copied),
      );
      copied += count;
      this.offset += count;
      if (this.offset >= source.length) {
        this.index += 1;
        this.offset = 0;
      }
    }
    if (this.index >= buffers.length) this.segment = null;
    return copied;
  }

  private async readFile(
    segment: Extract<TarSegment, { kind: "file" }>,
    view: Uint8Array,
    at: number,
  ): Promise<number> {
    const count = await this.readAhead.copyInto(
      view,
      at,
      Math.min(view.length - at, segment.size - this.offset),
    );
    this.offset += count;
    if (this.offset >= segment.size) {
      segment.shrank = this.readAhead.shrank;
      this.segment = null;
    }
    return count;
  }
}
