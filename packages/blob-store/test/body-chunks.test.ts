import { describe, expect, it } from "vitest";
import { bodyChunks, readBodyInto } from "../src/index.js";

const body = Buffer.from(Array.from({ length: 700 * 1024 + 17 }, (_, index) => (index * 31) % 256));

/** A byte stream over `bytes` that counts its BYOB pulls and its fresh chunks, and whether it was cancelled. */
function byteStream(bytes: Uint8Array) {
  let position = 0;
  const seen = { byob: 0, fresh: 0, cancelled: false };
  const stream = new ReadableStream({
    type: "bytes",
    pull(controller) {
      if (position >= bytes.byteLength) {
        controller.close();
        controller.byobRequest?.respond(0);
        return;
      }
      const view = controller.byobRequest?.view;
      if (!view) {
        seen.fresh += 1;
        const chunk = bytes.slice(position, position + 1000);
        position += chunk.byteLength;
        controller.enqueue(chunk);
        return;
      }
      seen.byob += 1;
      const step = Math.min(view.byteLength, bytes.byteLength - position);
      new Uint8Array(view.buffer, view.byteOffset, step).set(
        bytes.subarray(position, position + step),
      );
      position += step;
      controller.byobRequest?.respond(step);
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { stream, seen };
}

const plainStream = (bytes: Uint8Array) => new Response(bytes).body as ReadableStream<Uint8Array>;

describe("body reads", () => {
  it("reads a byte stream into one reused buffer, a view per chunk, and any other stream as it comes", async () => {
    const { stream, seen } = byteStream(body);
    const buffers = new Set<ArrayBufferLike>();
    const copies: Buffer[] = [];
    let previous: Uint8Array | null = null;
    for await (const chunk of bodyChunks(stream)) {
      // The previous view's memory went back to the stream for this read.
      expect(previous?.byteLength ?? 0).toBe(0);
      expect(chunk.buffer.byteLength).toBe(256 * 1024);
      buffers.add(chunk.buffer);
      copies.push(Buffer.from(chunk));
      previous = chunk;
    }
    expect(Buffer.concat(copies).equals(body)).toBe(true);
    expect(seen).toEqual({ byob: 3, fresh: 0, cancelled: false });

    const plain: Buffer[] = [];
    for await (const chunk of bodyChunks(plainStream(body))) plain.push(Buffer.from(chunk));
    expect(Buffer.concat(plain).equals(body)).toBe(true);
  });

  it("cancels the body when its reader leaves early", async () => {
    const { stream, seen } = byteStream(body);
    for await (const _ of bodyChunks(stream)) break;
    expect(seen.cancelled).toBe(true);
  });

  it("reads a whole body straight into the buffer given, and refuses one shorter or longer", async () => {
    const into = Buffer.allocUnsafeSlow(body.byteLength);
    const { stream, seen } = byteStream(body);
    const filled = await readBodyInto(stream, into);
    expect(filled && Buffer.from(filled).equals(body)).toBe(true);
    // The memory handed in came back filled: no chunk was allocated on the way.
    expect(filled?.buffer.byteLength).toBe(body.byteLength);
    expect(seen.fresh).toBe(0);
    expect(into.byteLength).toBe(0);

    expect(
      await readBodyInto(
        byteStream(body.subarray(0, body.byteLength - 1)).stream,
        Buffer.allocUnsafeSlow(body.byteLength),
      ),
    ).toBeNull();
    const longer = byteStream(Buffer.concat([body, Buffer.from([1])]));
    expect(await readBodyInto(longer.stream, Buffer.allocUnsafeSlow(body.byteLength))).toBeNull();
    expect(longer.seen.cancelled).toBe(true);
    const plain = await readBodyInto(plainStream(body), Buffer.allocUnsafeSlow(body.byteLength));
    expect(plain && Buffer.from(plain).equals(body)).toBe(true);
    expect(
      await readBodyInto(plainStream(body), Buffer.allocUnsafeSlow(body.byteLength + 1)),
    ).toBeNull();
    expect(
      await readBodyInto(plainStream(body), Buffer.allocUnsafeSlow(body.byteLength - 1)),
    ).toBeNull();
  });
});
