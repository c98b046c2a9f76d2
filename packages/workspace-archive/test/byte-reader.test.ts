import { describe, expect, it } from "vitest";
import { createByteReader } from "../src/byte-reader.js";

async function* chunksOf(...chunks: string[]): AsyncGenerator<Buffer> {
  for (const chunk of chunks) yield Buffer.from(chunk);
}

async function collect(chunks: AsyncIterable<Buffer>): Promise<string[]> {
  const out: string[] = [];
  for await (const chunk of chunks) out.push(chunk.toString());
  return out;
}

describe("byte reader", () => {
  it("cuts a stream into slices of given sizes across chunk boundaries, empty slices included", async () => {
    const reader = createByteReader(chunksOf("abc", "defgh", "", "ij"));
    const slices = [];
    for (const size of [2, 0, 4, 1, 3]) slices.push((await reader.read(size))?.toString());
    expect(slices).toEqual(["ab", "", "cdef", "g", "hij"]);
    expect(await reader.atEnd()).toBe(true);
  });

  it("answers null for a slice the stream ends before, and tells when bytes are left over", async () => {
    const short = createByteReader(chunksOf("abc", "de"));
    expect((await short.read(4))?.toString()).toBe("abcd");
    expect(await short.read(2)).toBeNull();
    const long = createByteReader(chunksOf("abcdef"));
    expect((await long.read(5))?.toString()).toBe("abcde");
    expect(await long.atEnd()).toBe(false);
  });

  it("streams a large slice as chunks, stopping at its size or where the stream ends", async () => {
    const reader = createByteReader(chunksOf("abc", "defgh", "ij"));
    expect(await collect(reader.chunks(6))).toEqual(["abc", "def"]);
    expect(await collect(reader.chunks(10))).toEqual(["gh", "ij"]);
    expect(await reader.atEnd()).toBe(true);
  });

  it("hands out buffered bytes without a wait, skips and drains, counting every byte it consumed", async () => {
    const reader = createByteReader(chunksOf("abcd", "efgh", "ijkl"));
    expect(reader.readNow(1)).toBeNull(); // nothing buffered before the first read
    expect((await reader.read(1))?.toString()).toBe("a");
    expect(reader.readNow(3)?.toString()).toBe("bcd");
    expect(reader.readNow(1)).toBeNull(); // the chunk at hand is used up: no wait, nothing consumed
    expect(reader.position).toBe(4);
    expect(await reader.skip(5)).toBe(5);
    expect(reader.position).toBe(9);
    await reader.drain();
    expect(reader.position).toBe(12);
    expect(await reader.atEnd()).toBe(true);
    expect(await createByteReader(chunksOf("ab")).skip(3)).toBe(2);
  });

  it("closes its source when left early: the generator's cleanup runs and later reads find the end", async () => {
    let cleaned = 0;
    async function* source(): AsyncGenerator<Buffer> {
      try {
        for (;;) yield Buffer.from("abcd");
      } finally {
        cleaned += 1;
      }
    }
    const reader = createByteReader(source());
    expect((await reader.read(6))?.toString()).toBe("abcdab");
    await reader.close();
    expect(cleaned).toBe(1);
    expect(await reader.read(1)).toBeNull();
    expect(await reader.atEnd()).toBe(true);
    await reader.close();
    expect(cleaned).toBe(1);
  });

  it("passes errors of the source on", async () => {
    async function* failing(): AsyncGenerator<Buffer> {
      yield Buffer.from("ab");
      throw new Error("connection reset");
    }
    const reader = createByteReader(failing());
    await expect(reader.read(3)).rejects.toThrow("connection reset");
  });
});
