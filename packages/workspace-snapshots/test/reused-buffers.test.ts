import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { readChanges } from "../src/change-stream.js";
import { localZstd, transcode } from "../src/codec.js";
import { createTemporaryFile } from "../src/temporary-file.js";
import { temporaryFolder } from "./workspace-fixture.js";

/** `bytes` in pieces of `size`, all read through one buffer that is filled again for every piece. */
async function* throughOneBuffer(bytes: Buffer, size: number): AsyncGenerator<Uint8Array> {
  const buffer = Buffer.alloc(size);
  for (let at = 0; at < bytes.length; at += size) {
    const piece = bytes.subarray(at, at + size);
    piece.copy(buffer);
    yield buffer.subarray(0, piece.length);
    buffer.fill(0xee);
  }
}

async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of source) items.push(item);
  return items;
}

/** The pieces of `source`, each copied as it arrives (as a reader of a reused buffer must). */
async function concatenated(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const copies: Buffer[] = [];
  for await (const piece of source) copies.push(Buffer.from(piece));
  return Buffer.concat(copies);
}

// Readers that take pieces of a buffer the source fills again must be done with each piece when they ask for
// the next: these sources overwrite the piece as soon as they are resumed.
describe("readers of a reused buffer", () => {
  it("readChanges parses records split at every chunk boundary", async () => {
    const records = [
      "a//ed 755 0 0 1.0000000000 1 1 1 1 ",
      "a/b.txt//ef 644 12 8 1.5000000000 2 2 7 1 ",
      `a/b.txt//h${"ab".repeat(32)}`,
      "a/gone//r",
      "é/link//el 777 0 0 3.0000000000 4 4 9 1 ../a",
    ];
    const stream = Buffer.from(`${records.join("\0")}\0`, "utf8");
    const whole = await collect(readChanges(throughOneBuffer(stream, stream.length)));
    expect(whole.map((change) => change.path)).toEqual(["a", "a/b.txt", "a/gone", "é/link"]);
    expect(whole[1]?.hash).toBe("ab".repeat(32));
    for (let size = 1; size <= stream.length; size += 1)
      expect(await collect(readChanges(throughOneBuffer(stream, size)))).toEqual(whole);
  });

  it("transcode hands every chunk on before it asks for the next", async () => {
    const data = Buffer.concat([randomBytes(300_000), Buffer.alloc(300_000, "source-like text ")]);
    const codecs = (await localZstd())
      ? (["gzip", "zstd", "none"] as const)
      : (["gzip", "none"] as const);
    for (const codec of codecs) {
      const encoded = await concatenated(
        transcode(throughOneBuffer(data, 65_536), codec, "encode"),
      );
      const decoded = await concatenated(
        transcode(throughOneBuffer(encoded, 4096), codec, "decode"),
      );
      expect(decoded.equals(data)).toBe(true);
    }
  });

  it("a spooled file read into one buffer gives back what was appended", async () => {
    const file = await createTemporaryFile(await temporaryFolder("reused-spool"));
    try {
      const data = randomBytes(700_000);
      for (let at = 0; at < data.length; at += 10_000)
        await file.append(data.subarray(at, at + 10_000));
      const pieces = await collect(file.read({ reuse: true }));
      expect(pieces.length).toBeGreaterThan(1);
      // Read in BYOB mode: each piece's memory went back into the stream for the next read.
      expect(pieces.every((piece) => piece.byteLength === 0)).toBe(true);
      const copied: Buffer[] = [];
      for await (const piece of file.read({ reuse: true })) copied.push(Buffer.from(piece));
      expect(Buffer.concat(copied).equals(data)).toBe(true);
      expect((await concatenated(file.read())).equals(data)).toBe(true);
      // As a byte stream: read in BYOB mode into one buffer, and with a default reader.
      const reader = file.stream().getReader({ mode: "byob" });
      let into = new ArrayBuffer(100_000);
      const byob: Buffer[] = [];
      for (;;) {
        const { done, value } = await reader.read(new Uint8Array(into));
        if (done) break;
        byob.push(Buffer.from(value));
        into = value.buffer as ArrayBuffer;
      }
      expect(Buffer.concat(byob).equals(data)).toBe(true);
      expect(
        (await concatenated(file.stream() as unknown as AsyncIterable<Uint8Array>)).equals(data),
      ).toBe(true);
    } finally {
      await file.close();
    }
  });
});
