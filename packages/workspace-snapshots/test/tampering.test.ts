import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type BlobStore, createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { describe, expect, it } from "vitest";
import { type SnapshotSandbox, createLocalSnapshotSandbox } from "../src/index.js";
import { localPlace } from "./support.js";

/** A sandbox that records every call, to prove a refused restore touched nothing. */
function watched(inner: SnapshotSandbox) {
  const calls: string[] = [];
  const sandbox: SnapshotSandbox = {
    run: (name, script, args, signal) => (
      calls.push(`run ${name} ${args[0] ?? ""}`), inner.run(name, script, args, signal)
    ),
    readFile: (path, signal) => (calls.push(`read ${path}`), inner.readFile(path, signal)),
    writeFile: (path, body, signal) => (
      calls.push(`write ${path}`), inner.writeFile(path, body, signal)
    ),
  };
  return { sandbox, calls };
}

async function keysOf(store: BlobStore, kind: string): Promise<string[]> {
  const page = await store.list({ prefix: "workspace-snapshots/" });
  return page.objects.map((object) => object.key).filter((key) => key.includes(`/${kind}/`));
}

async function flipByte(store: BlobStore, key: string, at: (size: number) => number) {
  const object = await store.get(key);
  const bytes = Buffer.from(await (object as NonNullable<typeof object>).bytes());
  const index = at(bytes.length);
  bytes[index] = (bytes[index] as number) ^ 0x01;
  await store.delete(key);
  await store.put(key, bytes);
}

async function workspaceWithEveryObject(workspace: string) {
  await mkdir(join(workspace, "src"));
  await writeFile(join(workspace, "src/small.txt"), "small content\n");
  await writeFile(join(workspace, "large.bin"), Buffer.alloc(400 * 1024, 7));
}

describe("a tampered object", () => {
  for (const kind of ["trees", "packs", "blobs", "snapshots"] as const) {
    it(`in ${kind} is refused before anything reaches the sandbox`, async () => {
      const store = createMemoryBlobStore();
      const source = await localPlace(store, "source");
      const target = await localPlace(store, "target");
      try {
        await workspaceWithEveryObject(source.workspace);
        const ref = await source.snapshots.checkpoint({
          sandbox: createLocalSnapshotSandbox(),
          sessionId: "s",
        });
        const keys = await keysOf(store, kind);
        expect(keys.length).toBeGreaterThan(0);
        for (const key of keys) await flipByte(store, key, (size) => Math.floor(size / 2));
        const { sandbox, calls } = watched(createLocalSnapshotSandbox());
        const refused = await target.snapshots
          .restore({ sandbox, sessionId: "s", id: ref.id })
          .catch((error: unknown) => error);
        expect(refused).toMatchObject({ code: "integrity_failed" });
        expect(calls).toEqual([]);
        expect(await readdir(target.workspace)).toEqual([]);
      } finally {
        await source.dispose();
        await target.dispose();
      }
    });
  }

  it("a tree whose entries were swapped for another valid tree is refused (its hash no longer matches)", async () => {
    const store = createMemoryBlobStore();
    const source = await localPlace(store, "source");
    try {
      await workspaceWithEveryObject(source.workspace);
      const ref = await source.snapshots.checkpoint({
        sandbox: createLocalSnapshotSandbox(),
        sessionId: "s",
      });
      const [first, second] = await keysOf(store, "trees");
      const other = await (await store.get(second as string))?.bytes();
      await store.delete(first as string);
      await store.put(first as string, other as Uint8Array);
      await expect(
        source.snapshots.prepareRestore({ sessionId: "s", id: ref.id }),
      ).rejects.toMatchObject({ code: "integrity_failed" });
    } finally {
      await source.dispose();
    }
  });
});

describe("the restore's proof in the sandbox", () => {
  it("names the path when the sandbox's tree differs from the snapshot", async () => {
    const store = createMemoryBlobStore();
    const source = await localPlace(store, "source");
    const target = await localPlace(store, "target");
    try {
      await workspaceWithEveryObject(source.workspace);
      const ref = await source.snapshots.checkpoint({
        sandbox: createLocalSnapshotSandbox(),
        sessionId: "s",
      });
      // Something the snapshot does not hold is already there.
      await writeFile(join(target.workspace, "stray.txt"), "not in the snapshot");
      const refused = await target.snapshots
        .restore({ sandbox: createLocalSnapshotSandbox(), sessionId: "s", id: ref.id })
        .catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: "integrity_failed", context: { entry: "stray.txt" } });
    } finally {
      await source.dispose();
      await target.dispose();
    }
  });
});
