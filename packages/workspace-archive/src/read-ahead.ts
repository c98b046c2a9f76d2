import type { FileHandle } from "node:fs/promises";
import { IO_CHUNK_BYTES } from "./io-sizes.js";

const SLOTS = 4;

interface Slot {
  readonly buffer: Buffer;
  /** The read filling this slot, resolving with the bytes read. */
  pending: Promise<number> | null;
  /** Bytes the read asked for; fewer back means the file ended early. */
  requested: number;
  available: number;
  consumed: number;
}

/**
 * Reads one file sequentially through four reused 1 MiB buffers, keeping the reads in flight on the
 * thread pool while the caller copies and hashes earlier data. The buffers are never handed out (callers
 * copy from them), so reusing them is safe and costs no page faults.
 */
export class ReadAhead {
  private readonly slots: Slot[] = Array.from({ length: SLOTS }, () => ({
    buffer: Buffer.allocUnsafeSlow(IO_CHUNK_BYTES),
    pending: null,
    requested: 0,
    available: 0,
    consumed: 0,
  }));
  private handle: FileHandle | null = null;
  private size = 0;
  private issued = 0;
  private current = 0;
  /** Set once a read came back short: the rest of the file reads as zeros. */
  shrank = false;

  /** Starts reading `size` bytes of `handle`. */
  begin(handle: FileHandle, size: number): void {
    this.handle = handle;
    this.size = size;
    this.issued = 0;
    this.current = 0;
    this.shrank = false;
    for (const slot of this.slots) this.issue(slot);
  }

  /** Copies up to `length` next bytes of the file into `view` at `at`; resolves with the count (> 0 until the end). */
  async copyInto(view: Uint8Array, at: number, length: number): Promise<number> {
    const slot = this.slots[this.current] as Slot;
    if (slot.pending !== null) {
      slot.available = await slot.pending;
      slot.pending = null;
      if (slot.available < slot.requested) {
        this.shrank = true;
        slot.buffer.fill(0, slot.available, slot.requested);
        slot.available = slot.requested;
      }
    }
    const count = Math.min(length, slot.available - slot.consumed);
    slot.buffer.copy(view, at, slot.consumed, slot.consumed + count);
    slot.consumed += count;
    if (slot.consumed >= slot.available) {
      this.issue(slot);
      this.current = (this.current + 1) % SLOTS;
    }
    return count;
  }

  /** Waits for reads still in flight (before the file is closed). */
  async settle(): Promise<void> {
    await Promise.allSettled(this.slots.map((slot) => slot.pending));
    for (const slot of this.slots) slot.pending = null;
  }

  private issue(slot: Slot): void {
    slot.consumed = 0;
    slot.available = 0;
    slot.requested = Math.min(IO_CHUNK_BYTES, this.size - this.issued);
    if (slot.requested <= 0 || this.handle === null) {
      slot.pending = null;
      slot.requested = 0;
      return;
    }
    const position = this.issued;
    this.issued += slot.requested;
    slot.pending = this.shrank
      ? Promise.resolve(0)
      : readFully(this.handle, slot.buffer, slot.requested, position);
  }
}

/** Reads `length` bytes at `position`, looping over short reads; fewer only at the end of the file. */
export async function readFully(
  handle: FileHandle,
  buffer: Buffer,
  length: number,
  position: number,
): Promise<number> {
  let total = 0;
  while (total < length) {
    const { bytesRead } = await handle.read(buffer, total, length - total, position + total);
    if (bytesRead === 0) break;
    total += bytesRead;
  }
  return total;
}
