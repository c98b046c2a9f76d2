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
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name).slice(directory.length + 1)).sort();
}

describeBlobStoreSuite("filesystem", {
  createStore: async () => createFsBlobStore({ rootDir: await freshRoot() }),
  largeObject: { bytes: 200 * 1024 * 1024, maxRssGrowthBytes: 100 * 1024 * 1024 },
});

describe("filesystem blob store specifics", () => {
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
    expect(() => createFsBlobStore({ rootDir: "" })).toThrow(expect.objectContaining({ code: "invalid_config" }));
    expect(() => createFsBlobStore({} as { rootDir: string })).toThrow(/rootDir/);
  });
});
