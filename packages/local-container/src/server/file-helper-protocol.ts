/**
 * The file helper's protocol, shared by the program (`src/programs/file-helper.ts`, which runs inside each
 * container) and its client (`file-helper.ts`, in the server).
 *
 * Frames on stdin and stdout: u32 length of the rest, u32 request id, u32 header length, a JSON header,
 * then optional raw data. A request header is `{op, ...}`; an answer is `{ok: true, ...}` (with data for
 * `read`) or `{ok: false, code, message}` with the errno code. Requests run concurrently; files stay open
 * between `open*`, `read`/`write` and `close` as numbered handles. The helper exits when stdin ends.
 */

/** Largest frame either side sends or accepts: a header and at most one data chunk. */
export const MAX_FRAME_BYTES = 8 * 1024 * 1024;

/** Largest data chunk of one `read` or `write` frame. */
export const MAX_CHUNK_BYTES = 1024 * 1024;

/** Entries one `list` answer holds at most. */
export const MAX_LIST_ENTRIES = 10_000;

/** One frame: the request id, the JSON header and the data after it. */
export function encodeFrame(id: number, header: unknown, data?: Uint8Array): Buffer {
  const head = Buffer.from(JSON.stringify(header), "utf8");
  const body =
    data === undefined
      ? Buffer.alloc(0)
      : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const prefix = Buffer.alloc(12);
  prefix.writeUInt32BE(8 + head.length + body.length, 0);
  prefix.writeUInt32BE(id, 4);
  prefix.writeUInt32BE(head.length, 8);
  return Buffer.concat([prefix, head, body]);
}

/**
 * Splits a byte stream into frames (each without its length prefix) and hands each whole one to
 * `onFrame`. A length out of bounds calls `onMalformed` and reads no further. Chunks are joined only once
 * a whole frame is there, so a large frame costs one copy.
 */
export function createFrameReader(
  onFrame: (frame: Buffer) => void,
  onMalformed: () => void,
): (chunk: Buffer) => void {
  const parts: Buffer[] = [];
  let total = 0;
  let needed = 4;
  let broken = false;
  return (chunk) => {
    if (broken) return;
    parts.push(chunk);
    total += chunk.length;
    while (total >= needed) {
      const joined = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, total);
      parts.length = 0;
      const length = joined.readUInt32BE(0);
      if (length < 8 || length > MAX_FRAME_BYTES) {
        broken = true;
        return onMalformed();
      }
      if (joined.length < 4 + length) {
        parts.push(joined);
        needed = 4 + length;
        return;
      }
      const rest = joined.subarray(4 + length);
      if (rest.length > 0) parts.push(rest);
      total = rest.length;
      needed = 4;
      onFrame(joined.subarray(4, 4 + length));
    }
  };
}
