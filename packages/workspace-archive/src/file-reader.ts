import fs, { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";

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
    if (bytesRead <= expectedSize)
      return { content: buffer.subarray(0, bytesRead), changed: bytesRead !== expectedSize };
    return { content: fs.readFileSync(fd), changed: true };
  } finally {
    fs.closeSync(fd);
  }
}

/** Opens a file for reading without following a symlink that replaced it since it was listed. */
export function openForRead(path: string): Promise<FileHandle> {
  return open(path, READ_FLAGS);
}
