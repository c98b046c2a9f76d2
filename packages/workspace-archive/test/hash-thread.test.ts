import { createHash, randomBytes } from "node:crypto";
import { readdirSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import { setTimeout as sleep } from "node:timers/promises";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { packDirectory } from "../src/index.js";
import { createStreamHasher } from "../src/off-thread-sha256.js";
import { SHA256_WORKER_SOURCE } from "../src/sha256-worker-source.js";
import { tempDir } from "./support/temp-dir.js";

const MIB = 1024 * 1024;

/** Threads of this process (Linux): the hashing thread is one of them while it runs. */
const threads = () => readdirSync("/proc/self/task").length;

/** Waits until the thread count is back at `baseline`; generous, since a loaded machine is slow, never wrong. */
async function threadsBackTo(baseline: number): Promise<number> {
  const deadline = Date.now() + 30_000;
  while (threads() > baseline && Date.now() < deadline) await sleep(20);
  return threads();
}

/** The thread count once it has held still for a while (threads of earlier packs have ended). */
async function settledThreads(): Promise<number> {
  let count = threads();
  for (let still = 0, rounds = 0; still < 5 && rounds < 150; rounds += 1) {
    await sleep(100);
    const now = threads();
    still = now === count ? still + 1 : 0;
    count = now;
  }
  return count;
}

async function tree(label: string): Promise<string> {
  const root = await tempDir(label);
  await writeFile(join(root, "big.bin"), randomBytes(6 * MIB + 123));
  for (let index = 0; index < 30; index += 1)
    await writeFile(join(root, `s${index}`), `small ${index}`);
  return root;
}

describe("off-thread sha256", () => {
  it("hashes exactly what it was given, at any size and in any pieces", async () => {
    const data = randomBytes(9 * MIB + 7);
    for (const cuts of [[0], [MIB], [MIB + 1], [3, MIB - 3, 2 * MIB + 5, 4 * MIB], [data.length]]) {
      const hasher = createStreamHasher();
      let at = 0;
      for (const end of [...cuts, data.length]) {
        await hasher.update(data.subarray(at, Math.max(at, end)));
        at = Math.max(at, end);
      }
      const expected = data.subarray(0, at);
      expect(await hasher.finish()).toEqual({
        sha256: createHash("sha256").update(expected).digest("hex"),
        bytes: expected.length,
      });
    }
    expect(await createStreamHasher().finish()).toEqual({
      sha256: createHash("sha256").digest("hex"),
      bytes: 0,
    });
  });

  it("runs the thread's source as CommonJS and as an ES module (hosts started with --input-type=module)", async () => {
    const data = randomBytes(3 * MIB);
    for (const execArgv of [[], ["--input-type=module"]]) {
      const thread = new Worker(SHA256_WORKER_SOURCE, { eval: true, execArgv });
      // Listened for from the start: an exit seen only after the digest was awaited would be missed.
      const exited = new Promise((resolve) => thread.once("exit", resolve));
      const replies: { buffer?: ArrayBuffer; sha256?: string }[] = [];
      const digest = new Promise<string>((resolve, reject) => {
        thread.on("error", reject);
        thread.on("exit", (code) =>
          reject(new Error(`the thread exited (${code}) before it sent its digest`)),
        );
        thread.on("message", (message: { buffer?: ArrayBuffer; sha256?: string }) => {
          replies.push(message);
          if (message.sha256 !== undefined) resolve(message.sha256);
        });
      });
      const copy = new Uint8Array(data).buffer;
      thread.postMessage({ buffer: copy, length: data.length - 5 }, [copy]);
      thread.postMessage({ end: true });
      expect(await digest).toBe(
        createHash("sha256")
          .update(data.subarray(0, data.length - 5))
          .digest("hex"),
      );
      expect(replies[0]?.buffer?.byteLength).toBe(data.length);
      await exited;
    }
  });

  it("copies what it queues: the caller may overwrite its buffer at once", async () => {
    const view = new Uint8Array(MIB / 2);
    const expected = createHash("sha256");
    const hasher = createStreamHasher();
    for (let round = 0; round < 12; round += 1) {
      view.fill(round);
      expected.update(view);
      await hasher.update(view);
    }
    expect((await hasher.finish()).sha256).toBe(expected.digest("hex"));
  });

  it("ends its thread with the byte stream's pack; the Node stream hashes in place", async () => {
    const root = await tree("hash-thread-end");
    const expected = await buffer(packDirectory(root).stream);
    const baseline = await settledThreads();
    const web = packDirectory(root);
    const reader = web.toWebStream().getReader();
    let peak = 0;
    const chunks: Uint8Array[] = [];
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      chunks.push(next.value);
      peak = Math.max(peak, threads());
    }
    expect(peak).toBeGreaterThan(baseline);
    expect(Buffer.concat(chunks).equals(expected)).toBe(true);
    expect((await web.digest).sha256).toBe(createHash("sha256").update(expected).digest("hex"));
    expect(await threadsBackTo(baseline)).toBe(baseline);
    const node = packDirectory(root);
    let nodePeak = 0;
    for await (const chunk of node.stream) {
      expect(chunk).toBeInstanceOf(Buffer);
      nodePeak = Math.max(nodePeak, threads());
    }
    expect(nodePeak).toBe(baseline);
    expect((await node.digest).sha256).toBe((await web.digest).sha256);
  });

  it("terminates its thread when the pack is abandoned or cancelled", async () => {
    const root = await tree("hash-thread-abort");
    await buffer(packDirectory(root).stream);
    const baseline = await settledThreads();
    const abandoned = packDirectory(root);
    let peak = 0;
    let read = 0;
    for await (const chunk of Readable.fromWeb(abandoned.toWebStream() as never)) {
      read += (chunk as Buffer).length;
      peak = Math.max(peak, threads());
      if (read > 3 * MIB) break;
    }
    expect(peak).toBeGreaterThan(baseline);
    await expect(abandoned.digest).rejects.toBeDefined();
    expect(await threadsBackTo(baseline)).toBe(baseline);
    const cancelled = packDirectory(root);
    const reader = cancelled.toWebStream().getReader();
    for (let bytes = 0; bytes <= 3 * MIB; )
      bytes += ((await reader.read()).value as Uint8Array).length;
    expect(threads()).toBeGreaterThan(baseline);
    await reader.cancel();
    await expect(cancelled.digest).rejects.toBeDefined();
    expect(await threadsBackTo(baseline)).toBe(baseline);
  });
});
