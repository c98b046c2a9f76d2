import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { describe, expect, it } from "vitest";
import {
  type SnapshotSandbox,
  createLocalSnapshotSandbox,
  createWorkspaceSnapshots,
  sessionKeyOf,
} from "../src/index.js";
import { temporaryFolder } from "./workspace-fixture.js";

async function setup(lockTtlMs: number) {
  const root = await temporaryFolder("lock");
  await mkdir(join(root, "ws"));
  await writeFile(join(root, "ws", "file.txt"), "content");
  const store = createMemoryBlobStore();
  const snapshots = createWorkspaceSnapshots({
    store,
    workspace: join(root, "ws"),
    cacheDirectory: join(root, "cache"),
    scratchDirectory: root,
    lockTtlMs,
  });
  return { store, snapshots, lock: `workspace-snapshots/${sessionKeyOf("s")}/lock` };
}

describe("the session's lock object", () => {
  it("is broken once its holder stopped renewing it", async () => {
    const { store, snapshots, lock } = await setup(1000);
    await store.put(
      lock,
      JSON.stringify({ owner: "a process that died", expires: Date.now() - 1 }),
    );
    const ref = await snapshots.checkpoint({
      sandbox: createLocalSnapshotSandbox(),
      sessionId: "s",
    });
    expect(ref.id).toMatch(/^[0-9a-f]{64}$/);
    expect(await store.head(lock)).toBeNull();
  });

  it("is renewed while held: a sweep waits for a checkpoint that outlasts the lock's ttl", async () => {
    const { store, snapshots, lock } = await setup(300);
    const inner = createLocalSnapshotSandbox();
    const order: string[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    // The checkpoint stops after listing until the test lets it go, well past the lock's ttl.
    const sandbox: SnapshotSandbox = {
      ...inner,
      async run(name, script, args, signal) {
        const result = await inner.run(name, script, args, signal);
        if (args[0] === "list") {
          order.push("listed");
          await held;
        }
        return result;
      },
    };
    const checkpoint = snapshots
      .checkpoint({ sandbox, sessionId: "s" })
      .then((ref) => (order.push("published"), ref));
    while (!order.includes("listed")) await new Promise((resolve) => setTimeout(resolve, 20));
    const sweep = snapshots
      .sweep({ sessionId: "s", published: [], graceMs: 0 })
      .then((result) => (order.push("swept"), result));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(order).toEqual(["listed"]);
    expect(await store.head(lock)).not.toBeNull();
    release();
    await checkpoint;
    const result = await sweep;
    expect(order).toEqual(["listed", "published", "swept"]);
    // Nothing was published to the sweep, so it took everything, after the checkpoint and not during it.
    expect(result.deleted).toBeGreaterThan(0);
  });
});
