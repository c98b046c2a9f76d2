import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bodyChunks, readBodyInto } from "@open-managed-agents/blob-store";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { afterEach, describe, expect, it } from "vitest";
import { openTemporaryFile } from "../src/checkpoint/temporary-file.js";

let directory: string | undefined;
afterEach(async () => {
  if (directory) await rm(directory, { recursive: true, force: true });
  directory = undefined;
});

const body = Buffer.from(Array.from({ length: 700 * 1024 + 17 }, (_, index) => (index * 31) % 256));

describe("store reads", () => {
  it("reads the filesystem store's bodies and the driver's spools in BYOB mode", async () => {
    directory = await mkdtemp(join(tmpdir(), "oma-store-reads-"));
    const store = createFsBlobStore({ rootDir: join(directory, "store") });
    await store.put("a", body);
    const object = await store.get("a");
    const chunks: number[] = [];
    const copies: Buffer[] = [];
    for await (const chunk of bodyChunks(
      (object as { stream(): ReadableStream<Uint8Array> }).stream(),
    )) {
      chunks.push(chunk.buffer.byteLength);
      copies.push(Buffer.from(chunk));
    }
    expect(Buffer.concat(copies).equals(body)).toBe(true);
    expect(new Set(chunks)).toEqual(new Set([256 * 1024]));

    const file = await openTemporaryFile(directory);
    try {
      await file.writeAt(body, 0);
      const whole = await readBodyInto(
        file.stream(64 * 1024),
        Buffer.allocUnsafeSlow(body.byteLength),
      );
      expect(whole && Buffer.from(whole).equals(body)).toBe(true);
      // A default reader gets chunks of the size asked for.
      const sizes: number[] = [];
      for await (const chunk of file.stream(64 * 1024) as unknown as AsyncIterable<Uint8Array>)
        sizes.push(chunk.byteLength);
      expect(sizes.slice(0, 2)).toEqual([64 * 1024, 64 * 1024]);
      expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(body.byteLength);
    } finally {
      await file.close();
    }
  });
});
