/** A BYOB reader of `stream` when it is a byte stream (the fs blob store's bodies are); null for any other. */
function byobReader(stream: ReadableStream<Uint8Array>): ReadableStreamBYOBReader | null {
  try {
    return stream.getReader({ mode: "byob" });
  } catch (error) {
    if (error instanceof TypeError) return null;
    throw error;
  }
}

/**
 * Reads a body of exactly `into.byteLength` bytes into `into`, straight from the store when the body is a
 * byte stream. Answers the filled buffer (a BYOB read hands the memory back in a new ArrayBuffer, so `into`
 * itself is left empty) or null when the body held fewer or more bytes.
 */
export async function readWhole(stream: ReadableStream<Uint8Array>, into: Buffer): Promise<Buffer | null> {
  const size = into.byteLength;
  const reader = byobReader(stream);
  if (!reader) {
    let filled = 0;
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
      if (filled + chunk.byteLength > size) return null;
      into.set(chunk, filled);
      filled += chunk.byteLength;
    }
    return filled === size ? into : null;
  }
  let bytes = into;
  let filled = 0;
  let ended = false;
  try {
    while (filled < size) {
      const { done, value } = await reader.read(new Uint8Array(bytes.buffer, bytes.byteOffset + filled, size - filled));
      if (value) bytes = Buffer.from(value.buffer, bytes.byteOffset, size);
      if (done) {
        ended = true;
        return null;
      }
      filled += value.byteLength;
    }
    // One more read, into a byte of its own, must find the end: a longer body is refused.
    const { done } = await reader.read(new Uint8Array(1));
    ended = done;
    return done ? bytes : null;
  } finally {
    if (!ended) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
