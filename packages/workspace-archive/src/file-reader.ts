import fs, { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { IO_CHUNK_BYTES } from "./constants.js";

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW;

/** Contents of a small file, and whether its size differed from what `lstat` reported. */
export interface SmallFile {
  readonly content: Buffer;
  readonly changed: boolean;
}

/**
 * Reads a small file with synchronous calls. The header is written after the read, so the archive
 * records the bytes actually read even when the file changed since it was listed.
 */
export function readSmallFile(path: string, expectedSize: number): SmallFile {
  const fd = fs.openSync(path, READ_FLAGS);
  try {
    const buffer = Buffer.allocUnsafe(expectedSize + 1);
    const bytesRead = fs.readSync(fd, buffer, 0, buffer.length, 0);
    if (bytesRead <= expectedSize) return { content: buffer.subarray(0, bytesRead), changed: bytesRead !== expectedSize };
    return { content: fs.readFileSync(fd), changed: true };
  } finally {
    fs.closeSync(fd);
  }
}

/** Opens a file for reading without following a symlink that replaced it since it was listed. */
export function openForRead(path: string): Promise<FileHandle> {
  return open(path, READ_FLAGS);
}

/** Reads kept in flight while a large file is streamed: enough to hide thread-pool latency on a busy machine. */
const READ_AHEAD = 4;

/**
 * Yields exactly `size` bytes of an open file in 1 MiB reads, with up to four reads in flight. A file
 * that shrank is padded with zeros (its header is already out); returns whether the file changed while
 * it was read. The caller closes `handle`.
 */
export async function* fileChunks(handle: FileHandle, size: number): AsyncGenerator<Buffer, boolean> {
  const pending: Promise<Buffer>[] = [];
  let requested = 0;
  const refill = () => {
    while (pending.length < READ_AHEAD && requested < size) {
      const length = Math.min(IO_CHUNK_BYTES, size - requested);
      pending.push(readAt(handle, requested, length));
      requested += length;
    }
  };
  try {
    let changed = false;
    let position = 0;
    refill();
    while (pending.length > 0) {
      let chunk = await (pending.shift() as Promise<Buffer>);
      const expected = Math.min(IO_CHUNK_BYTES, size - position);
      if (chunk.length < expected) {
        changed = true;
        chunk = Buffer.concat([chunk, Buffer.alloc(expected - chunk.length)]);
      }
      position += chunk.length;
      refill();
      yield chunk;
    }
    const final = await handle.stat();
    return changed || final.size !== size;
  } finally {
    await Promise.allSettled(pending);
  }
}

function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  return handle.read(buffer, 0, length, position).then(({ bytesRead }) => buffer.subarray(0, bytesRead));
}
