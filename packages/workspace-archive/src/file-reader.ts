import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { IO_CHUNK_BYTES } from "./constants.js";

/** The part of a tar entry sink that file streaming needs. */
export interface EntrySink {
  write(data: Uint8Array): boolean;
  end(): unknown;
  on(event: "drain" | "error" | "close", listener: (error?: unknown) => void): unknown;
  off(event: "drain" | "error" | "close", listener: (error?: unknown) => void): unknown;
}

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW;

/** Contents of a small file, and whether its size differed from what `lstat` reported. */
export interface SmallFile {
  readonly content: Buffer;
  readonly changed: boolean;
}

/**
 * Reads a small file in one call. The header is written after the read, so the archive records the
 * bytes actually read even when the file changed since it was listed.
 */
export async function readSmallFile(path: string, expectedSize: number): Promise<SmallFile> {
  const handle = await open(path, READ_FLAGS);
  try {
    const buffer = Buffer.allocUnsafe(expectedSize + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead <= expectedSize) return { content: buffer.subarray(0, bytesRead), changed: bytesRead !== expectedSize };
    return { content: await handle.readFile(), changed: true };
  } finally {
    await handle.close();
  }
}

/** Opens a file for reading without following a symlink that replaced it since it was listed. */
export function openForRead(path: string): Promise<FileHandle> {
  return open(path, READ_FLAGS);
}

/**
 * Streams exactly `size` bytes of a file into `sink` with one read ahead, so disk reads overlap with
 * packing and hashing. A file that shrank is padded with zeros (its header is already written); the
 * result says whether the file changed while it was read. The caller closes `handle`.
 */
export async function streamFile(handle: FileHandle, size: number, sink: EntrySink): Promise<boolean> {
  let pending: Promise<Buffer> | null = null;
  try {
    let changed = false;
    let position = 0;
    pending = size > 0 ? readAt(handle, position, Math.min(IO_CHUNK_BYTES, size)) : null;
    while (pending !== null) {
      let chunk: Buffer = await pending;
      if (chunk.length === 0) {
        changed = true;
        chunk = Buffer.alloc(Math.min(IO_CHUNK_BYTES, size - position));
      }
      position += chunk.length;
      pending = position < size ? readAt(handle, position, Math.min(IO_CHUNK_BYTES, size - position)) : null;
      if (!sink.write(chunk)) await drained(sink);
    }
    const final = await handle.stat();
    return changed || final.size !== size;
  } finally {
    await pending?.catch(() => undefined);
  }
}

function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  return handle.read(buffer, 0, length, position).then(({ bytesRead }) => buffer.subarray(0, bytesRead));
}

/** Resolves on `drain`; rejects when the sink errors or closes first (a destroyed pack never drains). */
function drained(sink: EntrySink): Promise<void> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      sink.off("drain", onDrain);
      sink.off("error", onError);
      sink.off("close", onClose);
    };
    const onDrain = () => {
      cleanup();
      resolve();
    };
    const onError = (error: unknown) => {
      cleanup();
      reject(error);
    };
    const onClose = () => {
      cleanup();
      reject(new Error("archive entry closed before its data was written"));
    };
    sink.on("drain", onDrain);
    sink.on("error", onError);
    sink.on("close", onClose);
  });
}
