import { type FileHandle, mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A read-write temporary file, known by its handle only. */
export interface TemporaryFile {
  readonly handle: FileHandle;
  /** Whether its name is already gone (the file then lives exactly as long as the handle). */
  readonly unlinked: boolean;
  /** Writes all of `bytes` at `position` (positional: reads running meanwhile are not disturbed). */
  writeAt(bytes: Uint8Array, position: number): Promise<void>;
  /** Reads `length` bytes at `position` into `into` from `offset`; fewer only at the end of the file. Returns how many. */
  readAt(into: Uint8Array, offset: number, length: number, position: number): Promise<number>;
  /**
   * The file from its start as a byte stream: a BYOB reader's reads land in its own buffer, a default reader
   * gets fresh chunks of `chunkBytes`. Positional reads over the shared handle, so several readers run at
   * once, and the handle stays open for the next one (it closes with {@link close}).
   */
  stream(chunkBytes: number): ReadableStream<Uint8Array>;
  /** Closes the handle and removes the file if its name is still there. Idempotent. */
  close(): Promise<void>;
}

/**
 * Opens a temporary file in a folder of its own under `directory` (the system's temporary folder by default)
 * and removes its name at once where the platform lets an open file go (Linux, macOS): a driver process that
 * dies mid-checkpoint (killed, out of memory) then leaves no spool behind, however large it had grown. Where
 * the name cannot go while the file is open, it goes at {@link TemporaryFile.close}.
 */
export async function openTemporaryFile(directory?: string): Promise<TemporaryFile> {
  const folder = await mkdtemp(join(directory ?? tmpdir(), "oma-bridge-spool-"));
  const remove = () => rm(folder, { recursive: true, force: true });
  let handle: FileHandle;
  try {
    handle = await open(join(folder, "spool"), "w+");
  } catch (error) {
    await remove().catch(() => undefined);
    throw error;
  }
  const unlinked = await remove().then(
    () => true,
    () => false,
  );
  let closed: Promise<void> | null = null;
  return {
    handle,
    unlinked,
    async writeAt(bytes, position) {
      for (let written = 0; written < bytes.byteLength; ) {
        written += (
          await handle.write(bytes, written, bytes.byteLength - written, position + written)
        ).bytesWritten;
      }
    },
    async readAt(into, offset, length, position) {
      let read = 0;
      while (read < length) {
        const { bytesRead } = await handle.read(
          into,
          offset + read,
          length - read,
          position + read,
        );
        if (bytesRead === 0) break;
        read += bytesRead;
      }
      return read;
    },
    stream: (chunkBytes) => readFrom(handle, chunkBytes),
    close() {
      closed ??= (async () => {
        await handle.close().catch(() => undefined);
        if (!unlinked) await remove();
      })();
      return closed;
    },
  };
}

/** See {@link TemporaryFile.stream}. */
function readFrom(handle: FileHandle, chunkBytes: number): ReadableStream<Uint8Array> {
  let position = 0;
  return new ReadableStream({
    type: "bytes",
    async pull(controller) {
      const request = controller.byobRequest;
      const view = request?.view;
      const into = view
        ? new Uint8Array(view.buffer, view.byteOffset, view.byteLength)
        : new Uint8Array(chunkBytes);
      const { bytesRead } = await handle.read(into, 0, into.byteLength, position);
      if (bytesRead === 0) {
        controller.close();
        request?.respond(0);
        return;
      }
      position += bytesRead;
      if (request && view) request.respond(bytesRead);
      else controller.enqueue(into.subarray(0, bytesRead));
    },
  });
}
