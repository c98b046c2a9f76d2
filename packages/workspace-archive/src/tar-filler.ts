import type { TarSegment } from "./tar-segments.js";

/**
 * Fills caller-provided buffers from a sequence of tar segments: byte segments are copied, file segments
 * are read from disk straight into the buffer (no intermediate allocation). A file that ends early is
 * padded with zeros, since its header already promised its size.
 */
export class TarFiller {
  private segment: TarSegment | null = null;
  /** Position inside the current segment: buffer index and offset, or file offset. */
  private index = 0;
  private offset = 0;
  private done = false;

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
    return true;
  }

  private copyBytes(buffers: readonly Buffer[], view: Uint8Array, at: number): number {
    let copied = 0;
    while (this.index < buffers.length && at + copied < view.length) {
      const source = buffers[this.index] as Buffer;
      const count = source.copy(view, at + copied, this.offset, Math.min(source.length, this.offset + view.length - at - copied));
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

  private async readFile(segment: Extract<TarSegment, { kind: "file" }>, view: Uint8Array, at: number): Promise<number> {
    const wanted = Math.min(view.length - at, segment.size - this.offset);
    let count = wanted;
    if (!segment.shrank) {
      const { bytesRead } = await segment.handle.read(view, at, wanted, this.offset);
      if (bytesRead === 0) segment.shrank = true;
      else count = bytesRead;
    }
    if (segment.shrank) view.fill(0, at, at + count);
    this.offset += count;
    if (this.offset >= segment.size) this.segment = null;
    return count;
  }
}
