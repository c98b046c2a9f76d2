import { randomBytes } from "node:crypto";
import { readdir, readlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type BlobStore, createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { type SnapshotSandbox, createLocalSnapshotSandbox } from "../src/index.js";
import { PARTS_IN_FLIGHT } from "../src/part-reader.js";
import { localPlace } from "./support.js";
import { describeTree, populate, random } from "./workspace-fixture.js";

const PART = /\/bundle\.(\d{6})$/;

/** The local sandbox, with each read of an archive part passed through `onPart` (its index, its bytes). */
function partSandbox(
  onPart: (index: number, bytes: AsyncIterable<Uint8Array>) => AsyncIterable<Uint8Array>,
): SnapshotSandbox {
  const inner = createLocalSnapshotSandbox();
  return {
    ...inner,
    readFile(path, signal) {
      const part = PART.exec(path);
      const bytes = inner.readFile(path, signal);
      return part ? onPart(Number(part[1]), bytes) : bytes;
    },
  };
}

/** Files this process holds open in `folder` (spools have no name: they show as deleted). */
async function openSpools(folder: string): Promise<string[]> {
  const targets = await Promise.all(
    (await readdir("/proc/self/fd")).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => "")),
  );
  return targets.filter((target) => target.startsWith(`${folder}/.oma-snapshot-spool-`));
}

const snapshotKeys = async (store: BlobStore) =>
  (await store.list({})).objects.map((o) => o.key).filter((key) => key.includes("/snapshots/"));

/** A workspace whose archive spans many parts of 64 KiB (the test places' part size). */
async function largeWorkspace(workspace: string, seed: number) {
  await populate(workspace, random(seed));
  for (let index = 0; index < 6; index += 1)
    await writeFile(join(workspace, `big-${index}.bin`), randomBytes(100 * 1024));
}

describe("a checkpoint's archive in parts", () => {
  it("is read several parts at a time, in order, and restores byte-identical", async () => {
    const store = createMemoryBlobStore();
    const source = await localPlace(store, "source");
    const target = await localPlace(store, "target");
    try {
      await largeWorkspace(source.workspace, 1);
      const read: number[] = [];
      let inFlight = 0;
      let most = 0;
      let thirdStarted = () => {};
      const third = new Promise<void>((resolve) => (thirdStarted = resolve));
      const sandbox = partSandbox(async function* (index, bytes) {
        read.push(index);
        inFlight += 1;
        most = Math.max(most, inFlight);
        if (index === 2) thirdStarted();
        // The first part is held back until the third is asked for: a reader one part at a time would hang.
        if (index === 0) await third;
        try {
          yield* bytes;
        } finally {
          inFlight -= 1;
        }
      });
      const ref = await source.snapshots.checkpoint({ sandbox, sessionId: "s" });
      expect(read.length).toBeGreaterThan(PARTS_IN_FLIGHT);
      expect([...read].sort((a, b) => a - b)).toEqual(read.map((_, index) => index));
      expect(most).toBe(PARTS_IN_FLIGHT);
      expect(await openSpools(source.root)).toEqual([]);
      await target.snapshots.restore({ sandbox, sessionId: "s", id: ref.id });
      expect(await describeTree(target.workspace)).toEqual(await describeTree(source.workspace));
    } finally {
      await source.dispose();
      await target.dispose();
    }
  });

  const FAILURES = [
    {
      name: "a part that cannot be read",
      part: async function* (): AsyncGenerator<Uint8Array> {
        yield* [];
        throw new Error("the file route went away");
      },
      error: /part 2 of the sandbox's archive failed: Error: the file route went away/,
    },
    {
      name: "a short part",
      part: async function* (bytes: AsyncIterable<Uint8Array>) {
        for await (const chunk of bytes) yield chunk.subarray(0, chunk.length - 1);
      },
      error: /part 2 of the sandbox's archive holds \d+ bytes, not 65536/,
    },
  ];
  for (const failure of FAILURES) {
    it(`fails on ${failure.name}, publishes nothing, keeps no spool, and the next one works`, async () => {
      const store = createMemoryBlobStore();
      const source = await localPlace(store, "source");
      const target = await localPlace(store, "target");
      try {
        await largeWorkspace(source.workspace, 2);
        const broken = partSandbox((index, bytes) => (index === 2 ? failure.part(bytes) : bytes));
        const failed = source.snapshots.checkpoint({ sandbox: broken, sessionId: "s" });
        await expect(failed).rejects.toThrow(SandboxFailedError);
        await expect(failed).rejects.toThrow(failure.error);
        expect(await snapshotKeys(store)).toEqual([]);
        expect(await openSpools(source.root)).toEqual([]);

        const sandbox = createLocalSnapshotSandbox();
        const ref = await source.snapshots.checkpoint({ sandbox, sessionId: "s" });
        await target.snapshots.restore({ sandbox, sessionId: "s", id: ref.id });
        expect(await describeTree(target.workspace)).toEqual(await describeTree(source.workspace));
      } finally {
        await source.dispose();
        await target.dispose();
      }
    });
  }

  it("stops every part read in flight when aborted, publishes nothing and keeps no spool", async () => {
    const store = createMemoryBlobStore();
    const source = await localPlace(store, "source");
    try {
      await largeWorkspace(source.workspace, 3);
      const controller = new AbortController();
      const stopped: number[] = [];
      const sandbox = partSandbox(async function* (index, bytes) {
        if (index === 1) controller.abort(new Error("stopped"));
        try {
          yield* bytes;
        } catch (error) {
          stopped.push(index);
          throw error;
        }
      });
      await expect(
        source.snapshots.checkpoint({ sandbox, sessionId: "s", signal: controller.signal }),
      ).rejects.toThrow("stopped");
      expect(stopped.length).toBeGreaterThan(0);
      expect(await snapshotKeys(store)).toEqual([]);
      expect(await openSpools(source.root)).toEqual([]);
    } finally {
      await source.dispose();
    }
  });
});
