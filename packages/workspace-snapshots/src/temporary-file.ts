import { randomUUID } from "node:crypto";
import { open, unlink } from "node:fs/promises";
import { join } from "node:path";
import { bodyChunks } from "@open-managed-agents/blob-store";

/** Bytes gathered before a write, and read at once. */
const CHUNK_BYTES = 256 * 1024;

/** A local file with no name: written by appending, read back from its start as often as needed. */
export interface TemporaryFile {
  append(bytes: Uint8Array | string): Promise<void>;
  /** Bytes appended. */
  readonly size: number;
  /**
   * The whole file from its start (what was appended so far); each piece is a fresh buffer. With `reuse`, every
   * piece is read into one buffer: a piece is valid only until the next is asked for, so only a reader that is
   * done with each piece before it asks again (one that copies or writes it out and waits) may reuse.
   */
  read(options?: { readonly reuse?: boolean }): AsyncIterable<Uint8Array>;
  /**
   * The whole file (what was appended when it was asked for) as a byte stream, read only as it is pulled: a
   * reader in BYOB mode has each read land in its own buffer, a default reader gets a fresh chunk per read.
   */
  stream(): ReadableStream<Uint8Array>;
  close(): Promise<void>;
}

/**
 * Opens a file in `directory` and removes its name at once: the process holds it open, and a process killed at
 * any point leaves nothing behind in the folder.
 */
export async function createTemporaryFile(directory: string): Promise<TemporaryFile> {
  const path = join(directory, `.oma-snapshot-spool-${randomUUID()}`);
  const handle = await open(path, "wx+", 0o600);
  await unlink(path);
  let written = 0;
  // One buffer gathers appends and is written out whenever it fills: appending allocates nothing.
  const held = Buffer.allocUnsafe(CHUNK_BYTES);
  let heldBytes = 0;
  const writeOut = async (bytes: Uint8Array) => {
    for (let at = 0; at < bytes.length; ) {
      const { bytesWritten } = await handle.write(bytes, at, bytes.length - at, written);
      at += bytesWritten;
      written += bytesWritten;
    }
  };
  const flush = async () => {
    if (heldBytes === 0) return;
    const bytes = held.subarray(0, heldBytes);
    heldBytes = 0;
    await writeOut(bytes);
  };
  const stream = () => {
    let at = 0;
    return new ReadableStream({
      type: "bytes",
      autoAllocateChunkSize: CHUNK_BYTES,
      start: () => flush(),
      async pull(controller) {
        const request = controller.byobRequest as ReadableStreamBYOBRequest;
        const view = request.view as Uint8Array;
        const length = Math.min(view.byteLength, written - at);
        const { bytesRead } =
          length > 0 ? await handle.read(view, 0, length, at) : { bytesRead: 0 };
        if (bytesRead === 0) {
          controller.close();
          // A read waiting in BYOB mode is answered (empty) only once the stream is closed.
          request.respond(0);
          return;
        }
        at += bytesRead;
        request.respond(bytesRead);
      },
    });
  };
  let closed = false;
  return {
    async append(bytes) {
      const buffer = typeof bytes === "string" ? Buffer.from(bytes, "utf8") : bytes;
      if (heldBytes + buffer.length > CHUNK_BYTES) await flush();
      // Written before the call returns: the caller may reuse its buffer.
      if (buffer.length >= CHUNK_BYTES) return writeOut(buffer);
      held.set(buffer, heldBytes);
      heldBytes += buffer.length;
    },
    get size() {
      return written + heldBytes;
    },
    read(options = {}) {
      // A byte stream read in BYOB mode through one buffer that goes back and forth, else a chunk per read.
      return options.reuse
        ? bodyChunks(stream(), CHUNK_BYTES)
        : (stream() as unknown as AsyncIterable<Uint8Array>);
    },
    stream,
    async close() {
      if (closed) return;
      closed = true;
      await handle.close();
    },
  };
}

/** The records of `source` (UTF-8, NUL-terminated), one at a time. */
export async function* recordsOf(source: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  let pending = "";
  const decoder = new TextDecoder();
  for await (const chunk of source) {
    pending += decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let end = pending.indexOf("\0"); end >= 0; end = pending.indexOf("\0", start)) {
      yield pending.slice(start, end);
      start = end + 1;
    }
    pending = pending.slice(start);
  }
  pending += decoder.decode();
  if (pending !== "") yield pending;
}
