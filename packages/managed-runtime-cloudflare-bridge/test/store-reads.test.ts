import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bodyChunks } from "@open-managed-agents/blob-store";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { afterEach, describe, expect, it } from "vitest";
import { readWhole } from "../src/checkpoint/store-reads.js";
import { openTemporaryFile } from "../src/checkpoint/temporary-file.js";

let directory: string | undefined;
afterEach(async () => {
  if (directory) await rm(directory, { recursive: true, force: true });
  directory = undefined;
});

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
      new Uint8Array(view.buffer, view.byteOffset, step).set(bytes.subarray(position, position + step));
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

describe("whole-body reads", () => {
  it("reads a whole body straight into the buffer given, and refuses one shorter or longer", async () => {
    const into = Buffer.allocUnsafeSlow(body.byteLength);
    const { stream, seen } = byteStream(body);
    const filled = await readWhole(stream, into);
    expect(filled?.equals(body)).toBe(true);
    // The memory handed in came back filled: no chunk was allocated on the way.
    expect(filled?.buffer.byteLength).toBe(body.byteLength);
    expect(seen.fresh).toBe(0);
    expect(into.byteLength).toBe(0);

    expect(await readWhole(byteStream(body.subarray(0, body.byteLength - 1)).stream, Buffer.allocUnsafeSlow(body.byteLength))).toBeNull();
    const longer = byteStream(Buffer.concat([body, Buffer.from([1])]));
    expect(await readWhole(longer.stream, Buffer.allocUnsafeSlow(body.byteLength))).toBeNull();
    expect(longer.seen.cancelled).toBe(true);
    expect((await readWhole(plainStream(body), Buffer.allocUnsafeSlow(body.byteLength)))?.equals(body)).toBe(true);
    expect(await readWhole(plainStream(body), Buffer.allocUnsafeSlow(body.byteLength + 1))).toBeNull();
    expect(await readWhole(plainStream(body), Buffer.allocUnsafeSlow(body.byteLength - 1))).toBeNull();
  });

  it("reads the filesystem store's bodies and the driver's spools in BYOB mode", async () => {
    directory = await mkdtemp(join(tmpdir(), "oma-store-reads-"));
    const store = createFsBlobStore({ rootDir: join(directory, "store") });
    await store.put("a", body);
    const object = await store.get("a");
    const chunks: number[] = [];
    const copies: Buffer[] = [];
    for await (const chunk of bodyChunks((object as { stream(): ReadableStream<Uint8Array> }).stream())) {
      chunks.push(chunk.buffer.byteLength);
      copies.push(Buffer.from(chunk));
    }
    expect(Buffer.concat(copies).equals(body)).toBe(true);
    expect(new Set(chunks)).toEqual(new Set([256 * 1024]));

    const file = await openTemporaryFile(directory);
    try {
      await file.writeAt(body, 0);
      const whole = await readWhole(file.stream(64 * 1024), Buffer.allocUnsafeSlow(body.byteLength));
      expect(whole?.equals(body)).toBe(true);
      // A default reader gets chunks of the size asked for.
      const sizes: number[] = [];
      for await (const chunk of file.stream(64 * 1024) as unknown as AsyncIterable<Uint8Array>) sizes.push(chunk.byteLength);
      expect(sizes.slice(0, 2)).toEqual([64 * 1024, 64 * 1024]);
      expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(body.byteLength);
    } finally {
      await file.close();
    }
  });
});
