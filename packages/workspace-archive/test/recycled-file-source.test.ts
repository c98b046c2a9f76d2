import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { recycledFileChunks, SourceRelease } from "../src/recycled-file-source.js";
import { tempDir } from "./support/temp-dir.js";

async function sampleFile(bytes: number): Promise<{ path: string; data: Buffer }> {
  const data = randomBytes(bytes);
  const path = join(await tempDir("recycle"), "data.bin");
  await writeFile(path, data);
  return { path, data };
}

describe("recycledFileChunks", () => {
  it("never reuses a buffer whose bytes are still referenced", async () => {
    const { path, data } = await sampleFile(20 * 1024 * 1024 + 123);
    const release = new SourceRelease();
    const kept: Buffer[] = [];
    for await (const chunk of recycledFileChunks(path, release)) kept.push(chunk);
    expect(Buffer.concat(kept).equals(data)).toBe(true);
  });

  it("reuses ring buffers once their bytes are settled, and respects held writes", async () => {
    const { path, data } = await sampleFile(20 * 1024 * 1024);
    const release = new SourceRelease();
    const seen: ArrayBufferLike[] = [];
    let offset = 0;
    let token: number | null = null;
    const copies: Buffer[] = [];
    for await (const chunk of recycledFileChunks(path, release)) {
      seen.push(chunk.buffer);
      copies.push(Buffer.from(chunk));
      offset += chunk.length;
      // Hold the first chunk as a write in flight until the 12th read: its buffer must not come back before.
      if (seen.length === 1) token = release.hold(0);
      if (seen.length === 12 && token !== null) release.drop(token);
      release.settle(offset);
    }
    expect(Buffer.concat(copies).equals(data)).toBe(true);
    expect(seen.slice(1, 12)).not.toContain(seen[0]);
    expect(seen.slice(12)).toContain(seen[1]);
  });
});
