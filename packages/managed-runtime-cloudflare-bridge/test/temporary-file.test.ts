import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createBufferedSpool } from "../src/checkpoint/buffered-spool.js";
import { createSpool } from "../src/checkpoint/spool.js";
import { openTemporaryFile } from "../src/checkpoint/temporary-file.js";

let directory: string | undefined;
afterEach(async () => {
  if (directory) await rm(directory, { recursive: true, force: true });
});
const folder = async () => (directory = await mkdtemp(join(tmpdir(), "oma-temporary-file-")));
const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

async function collect(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** A web stream of `bytes` in chunks of `step`. */
const streamOf = (bytes: Buffer, step: number) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.byteLength; at += step)
        controller.enqueue(bytes.subarray(at, at + step));
      controller.close();
    },
  });

describe("temporary files", () => {
  it("have no name on disk while they are open, and keep their bytes until closed", async () => {
    const root = await folder();
    const file = await openTemporaryFile(root);
    expect(file.unlinked).toBe(true);
    expect(await readdir(root)).toEqual([]);
    await file.handle.write(Buffer.from("kept"), 0, 4, 0);
    const read = Buffer.alloc(4);
    await file.handle.read(read, 0, 4, 0);
    expect(read.toString()).toBe("kept");
    await file.close();
    await file.close();
    await expect(file.handle.read(read, 0, 4, 0)).rejects.toThrow();
  });

  it("a spool leaves nothing named while written or read, reads back what was appended any number of times at once, and closes", async () => {
    const root = await folder();
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    const spool = await createSpool({ maxBytes: 1 << 30, directory: root });
    await spool.append(streamOf(bytes.subarray(0, 1_000_003), 65_536));
    expect(await readdir(root)).toEqual([]);
    await spool.append(streamOf(bytes.subarray(1_000_003), 100_000));
    expect(await spool.finish()).toEqual({ sha256: sha(bytes), size: bytes.byteLength });
    const [first, second] = await Promise.all([
      collect(spool.read() as unknown as AsyncIterable<Uint8Array>),
      collect(spool.read() as unknown as AsyncIterable<Uint8Array>),
    ]);
    expect(sha(first)).toBe(sha(bytes));
    expect(sha(second)).toBe(sha(bytes));
    expect(await readdir(root)).toEqual([]);
    await spool.dispose();
    await spool.dispose();
  });

  it("a buffered spool keeps small and large writes in order across its staging buffer, readable as a stream and as reused chunks", async () => {
    const root = await folder();
    const pieces = [
      randomBytes(10),
      randomBytes(700_000),
      randomBytes(900_000),
      randomBytes(3 * 1024 * 1024),
      randomBytes(1),
    ];
    const spool = await createBufferedSpool({ maxBytes: 1 << 30, directory: root, hash: true });
    for (const piece of pieces) await spool.write(piece);
    await spool.writeText("tail ✓");
    const expected = Buffer.concat([...pieces, Buffer.from("tail ✓")]);
    expect(await spool.finish()).toBe(expected.byteLength);
    expect(spool.sha256()).toBe(sha(expected));
    expect(await readdir(root)).toEqual([]);
    expect(sha(await collect(spool.read() as AsyncIterable<Buffer>))).toBe(sha(expected));
    const hash = createHash("sha256");
    for await (const chunk of spool.chunks()) hash.update(chunk);
    expect(hash.digest("hex")).toBe(sha(expected));
    await spool.dispose();
    expect(await readdir(root)).toEqual([]);
  });
});
