import { mkdtemp, readdir, rm, stat, writeFile, appendFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createFsBlobStore } from "../src/fs/index.js";
import { describeBlobStoreSuite } from "./blob-store-suite.js";
import { codeOf } from "./support/typed-errors.js";

const roots: string[] = [];
async function freshRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "oma-fs-blob-"));
  roots.push(root);
  return root;
}
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

async function filesBelow(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(directory.length + 1))
    .sort();
}

describeBlobStoreSuite("filesystem", {
  createStore: async () => createFsBlobStore({ rootDir: await freshRoot() }),
  largeObject: { bytes: 200 * 1024 * 1024, maxRssGrowthBytes: 100 * 1024 * 1024 },
});

describe("filesystem blob store specifics", () => {
  it.each(["blobs", "./blobs", "../blobs"])(
    "refuses the relative root %s with invalid_config naming rootDir",
    (rootDir) => {
      let refusal: unknown;
      try {
        createFsBlobStore({ rootDir });
      } catch (error) {
        refusal = error;
      }
      expect(refusal).toMatchObject({
        code: "invalid_config",
        message:
          "invalid filesystem blob store options at rootDir: must be an absolute path (resolve it against the folder you mean first)",
      });
    },
  );

  it("lays keys out as <segment>.d directories and one <segment>.blob file holding body and metadata", async () => {
    const rootDir = await freshRoot();
    const store = createFsBlobStore({ rootDir });
    await store.put("a", "top");
    await store.put("a/b/c", "nested");
    expect(await filesBelow(rootDir)).toEqual(["a.blob", "a.d/b.d/c.blob"]);
    expect((await stat(join(rootDir, "a.d/b.d/c.blob"))).size).toBeGreaterThan("nested".length);
  });

  it("leaves no temporary file and keeps the old object when a streamed overwrite fails", async () => {
    const rootDir = await freshRoot();
    const store = createFsBlobStore({ rootDir });
    await store.put("keep/me", "original");
    const failing = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("partial"));
        controller.error(new Error("source failed"));
      },
    });
    await expect(store.put("keep/me", failing)).rejects.toThrow();
    expect(await (await store.get("keep/me"))?.text()).toBe("original");
    expect(await filesBelow(rootDir)).toEqual(["keep.d/me.blob"]);
  });

  it("removes the temporary file when a conditional put loses", async () => {
    const rootDir = await freshRoot();
    const store = createFsBlobStore({ rootDir });
    await store.put("cond", "first");
    expect(await store.put("cond", "second", { ifNoneMatch: "*" })).toBeNull();
    expect(await filesBelow(rootDir)).toEqual(["cond.blob"]);
  });

  it("prunes directories a delete leaves empty, and keeps those still in use", async () => {
    const rootDir = await freshRoot();
    const store = createFsBlobStore({ rootDir });
    await store.put("x/y/z", "1");
    await store.put("x/w", "2");
    await store.delete("x/y/z");
    expect(await readdir(join(rootDir, "x.d"))).toEqual(["w.blob"]);
    await store.delete("x/w");
    expect(await readdir(rootDir)).toEqual([]);
  });

  it("reports a corrupt or foreign object file as integrity_failed", async () => {
    const rootDir = await freshRoot();
    const store = createFsBlobStore({ rootDir });
    await writeFile(join(rootDir, "foreign.blob"), "not an object file");
    expect(await codeOf(store.head("foreign"))).toBe("integrity_failed");
    await store.put("tampered", "body");
    await appendFile(join(rootDir, "tampered.blob"), "trailing garbage");
    expect(await codeOf(store.get("tampered"))).toBe("integrity_failed");
  });

  it("fails a body read with not_found when the object changed after get", async () => {
    const store = createFsBlobStore({ rootDir: await freshRoot() });
    await store.put("moving", "version one");
    const object = await store.get("moving");
    await store.put("moving", "version two");
    expect(await codeOf(object!.text())).toBe("not_found");
    expect(await (await store.get("moving"))?.text()).toBe("version two");
  });

  it("closes the object file when a body is cancelled, read partly or never read", async () => {
    const store = createFsBlobStore({ rootDir: await freshRoot() });
    await store.put("k", new Uint8Array(1024 * 1024).fill(7));
    const openFiles = async () => (await readdir("/proc/self/fd")).length;
    const before = await openFiles();
    for (let round = 0; round < 20; round += 1) {
      // Cancelled at once, while the body may still be opening its file.
      await (await store.get("k"))?.stream().cancel();
      // Cancelled after one chunk.
      const reader = (await store.get("k"))?.stream().getReader();
      await reader?.read();
      await reader?.cancel();
      // Taken and dropped unread: nothing is opened for it.
      (await store.get("k"))?.stream();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await openFiles()).toBe(before);
  });

  it("reads a body in BYOB mode straight into the reader's buffer, and in default mode as chunks", async () => {
    const store = createFsBlobStore({ rootDir: await freshRoot() });
    const body = new Uint8Array(3 * 1024 * 1024 + 123).map((_, index) => (index * 7) % 251);
    await store.put("big", body);
    const object = await store.get("big");
    const reader = (object!.stream() as ReadableStream<Uint8Array>).getReader({ mode: "byob" });
    // One buffer, handed back and forth: a read fills all of it, not a 256 KiB chunk copied in.
    let buffer = new ArrayBuffer(1024 * 1024);
    const sizes: number[] = [];
    const read = new Uint8Array(body.byteLength);
    for (let filled = 0; ; ) {
      const { done, value } = await reader.read(new Uint8Array(buffer));
      if (done) break;
      expect(value.buffer.byteLength).toBe(1024 * 1024);
      buffer = value.buffer;
      read.set(value, filled);
      filled += value.byteLength;
      sizes.push(value.byteLength);
    }
    expect(sizes).toEqual([1024 * 1024, 1024 * 1024, 1024 * 1024, 123]);
    expect(Buffer.from(read).equals(Buffer.from(body))).toBe(true);
    const chunks: number[] = [];
    for await (const chunk of (await store.get(
      "big",
    ))!.stream() as ReadableStream<Uint8Array> as unknown as AsyncIterable<Uint8Array>)
      chunks.push(chunk.byteLength);
    expect(chunks.slice(0, 2)).toEqual([256 * 1024, 256 * 1024]);
    expect(chunks.reduce((sum, size) => sum + size, 0)).toBe(body.byteLength);
  });

  it("writes a byte-stream body through the store's own buffer, and still checks its promised length", async () => {
    const store = createFsBlobStore({ rootDir: await freshRoot() });
    const body = new Uint8Array(1024 * 1024 + 5).map((_, index) => (index * 13) % 253);
    const byteBody = (length: number) => {
      let position = 0;
      const pulls = { byob: 0, fresh: 0 };
      const stream = new ReadableStream({
        type: "bytes",
        pull(controller) {
          if (position >= length) {
            controller.close();
            controller.byobRequest?.respond(0);
            return;
          }
          const view = controller.byobRequest?.view;
          if (!view) {
            pulls.fresh += 1;
            const chunk = body.slice(position, Math.min(length, position + 4096));
            position += chunk.byteLength;
            controller.enqueue(chunk);
            return;
          }
          pulls.byob += 1;
          const step = Math.min(view.byteLength, length - position);
          new Uint8Array(view.buffer, view.byteOffset, step).set(
            body.subarray(position, position + step),
          );
          position += step;
          controller.byobRequest?.respond(step);
        },
      });
      return { stream, pulls };
    };
    const whole = byteBody(body.byteLength);
    const info = await store.put("byob", whole.stream, { contentLength: body.byteLength });
    expect(info?.size).toBe(body.byteLength);
    expect(whole.pulls).toEqual({ byob: 5, fresh: 0 });
    expect(
      Buffer.from(
        await ((await store.get("byob")) as { bytes(): Promise<Uint8Array> }).bytes(),
      ).equals(Buffer.from(body)),
    ).toBe(true);
    // A body shorter than promised is refused as any other, and nothing is stored.
    await expect(
      store.put("short", byteBody(1000).stream, { contentLength: 1001 }),
    ).rejects.toMatchObject({ code: "invalid_request" });
    await expect(
      store.put("long", byteBody(1002).stream, { contentLength: 1001 }),
    ).rejects.toMatchObject({ code: "invalid_request" });
    expect(await store.head("short")).toBeNull();
    expect(await store.head("long")).toBeNull();
  });

  it("refuses a key segment longer than a file name with limit_exceeded, and reports it missing", async () => {
    const store = createFsBlobStore({ rootDir: await freshRoot() });
    const key = `dir/${"s".repeat(251)}`;
    expect(await codeOf(store.put(key, "x"))).toBe("limit_exceeded");
    expect(await store.get(key)).toBeNull();
    await store.delete(key);
  });

  it("lists nothing and finds nothing before the root directory exists", async () => {
    const store = createFsBlobStore({ rootDir: join(await freshRoot(), "not", "yet") });
    expect(await store.list()).toEqual({ objects: [] });
    expect(await store.head("a")).toBeNull();
    await store.delete("a");
  });

  it("rejects missing options with invalid_config", () => {
    expect(() => createFsBlobStore({ rootDir: "" })).toThrow(
      expect.objectContaining({ code: "invalid_config" }),
    );
    expect(() => createFsBlobStore({} as { rootDir: string })).toThrow(/rootDir/);
  });
});
