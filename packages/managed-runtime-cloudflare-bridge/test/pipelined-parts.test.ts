import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import type { ManagedSandboxRuntime } from "@open-managed-agents/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBridgeSandboxComponents } from "../src/driver.js";
import { resolveBridgeOptions } from "../src/options.js";
import { partsOnDisk } from "../src/checkpoint/sandbox-parts.js";
import { DESCRIBE_WORKSPACE } from "./random-workspace.js";
import { refusalOf, run } from "./runtime-helpers.js";

// Cloudflare's bridge Worker in local workerd over the local container runtime; a filesystem blob store.
let bridge: LocalBridge;
let storeDir: string;
let store: BlobStore;

beforeAll(async () => {
  bridge = await startLocalBridge();
  storeDir = await mkdtemp(join(tmpdir(), "oma-bridge-pipelined-"));
  store = createFsBlobStore({ rootDir: storeDir });
}, 120_000);
afterAll(async () => {
  await bridge?.stop();
  if (storeDir) await rm(storeDir, { recursive: true, force: true });
});

const PART_BYTES = 64 * 1024;
/** 40 random files of 64 KiB: 40 parts of 64 KiB, incompressible. */
const FORTY_FILES =
  "mkdir -p data && for i in $(seq 10 49); do head -c 65536 /dev/urandom > data/f$i; done";

/** Part GETs pass through `onPartGet` (given the part's name) before they are sent. */
function components(
  onPartGet: (part: string) => Promise<Response | undefined> | Response | undefined,
  compression: "auto" | "off" = "auto",
) {
  const wrapped: typeof fetch = async (input, init) => {
    const part = /\/(part-\d{6})$/.exec(new URL(String(input)).pathname)?.[1];
    if (part && (init?.method ?? "GET") === "GET") {
      const answer = await onPartGet(part);
      if (answer) return answer;
    }
    return fetch(input, init);
  };
  return createBridgeSandboxComponents(
    resolveBridgeOptions({
      baseUrl: bridge.url,
      apiKey: bridge.apiKey,
      checkpointStore: store,
      fetch: wrapped,
      singleRequestBytes: PART_BYTES,
      partBytes: PART_BYTES,
      compression,
    }),
  );
}

/** The host folder behind the sandbox's `/workspace`, found by a marker file placed in it. */
async function workspaceTree(runtime: ManagedSandboxRuntime): Promise<string> {
  const marker = `.marker-${crypto.randomUUID()}`;
  await run(runtime, `touch ${marker}`);
  const tree = bridge.containerServer.containers
    .list()
    .map((container) => container.mounts["/workspace"] ?? "")
    .find((root) => root !== "" && existsSync(join(root, marker)));
  if (!tree) throw new Error("the sandbox's workspace tree was not found");
  await run(runtime, `rm ${marker}`);
  return tree;
}

/** The scratch folders' finished and partial parts, and whether the sandbox's command has finished. */
function scratchState(tree: string) {
  const folders = readdirSync(tree).filter((name) => name.startsWith(".oma-checkpoint-"));
  const names = folders.flatMap((folder) => readdirSync(join(tree, folder)));
  return {
    finished: names.filter((name) => /^part-\d{6}$/.test(name)).length,
    partial: names.filter((name) => name.endsWith(".partial")).length,
    producerDone: names.includes("status"),
  };
}

const manifests = async () =>
  (await store.list({ prefix: "cloudflare-bridge-workspaces/sessions/" })).objects
    .map((object) => object.key)
    .filter((key) => key.includes("/manifests/"));

describe("pipelined checkpoint parts", () => {
  it("fetches each part in order once it is complete, while the sandbox still writes, and the sandbox holds only a few", async () => {
    const seen: { part: string; finished: number; partial: number; producerDone: boolean }[] = [];
    let tree = "";
    // A slow driver: without the bound the sandbox would pile up all 40 parts while it waits. Uncompressed:
    // a compressed transfer's parts are bounded by their bytes on disk (64 MiB), not by their count.
    const { provider } = components(async (part) => {
      seen.push({ part, ...scratchState(tree) });
      await new Promise((resolve) => setTimeout(resolve, 50));
      return undefined;
    }, "off");
    const context = { sessionId: "pipelined", workdir: "/workspace" };
    const runtime = await provider.create(context);
    try {
      await run(runtime, FORTY_FILES);
      tree = await workspaceTree(runtime);
      const before = await run(runtime, DESCRIBE_WORKSPACE);
      const handle = await runtime.checkpoint({ kind: "filesystem" });
      // The archive of 40 files of 64 KiB (with its headers) in parts of 64 KiB: at least 40 parts, in order.
      expect(seen.length).toBeGreaterThanOrEqual(40);
      expect(seen.map(({ part }) => part)).toEqual(
        Array.from({ length: seen.length }, (_, index) => `part-${String(index).padStart(6, "0")}`),
      );
      // The first part was fetched before the sandbox finished producing the rest.
      expect(seen[0]?.producerDone).toBe(false);
      expect(Math.max(...seen.map(({ finished }) => finished))).toBeLessThanOrEqual(
        partsOnDisk(PART_BYTES),
      );
      expect(Math.max(...seen.map(({ partial }) => partial))).toBeLessThanOrEqual(1);
      expect(readdirSync(tree).filter((name) => name.startsWith(".oma-checkpoint-"))).toEqual([]);
      const restored = await provider.restore(handle, context);
      expect(await run(restored, DESCRIBE_WORKSPACE)).toBe(before);
      await restored.destroy();
    } finally {
      await runtime.destroy();
    }
  }, 300_000);

  it("refuses a part that reads short or empty (a real bridge's answer for a missing file), publishes nothing, and the next checkpoint works", async () => {
    let fault: { part: string; body: Uint8Array } | null = null;
    const { provider } = components((part) =>
      fault?.part === part ? new Response(fault.body, { status: 200 }) : undefined,
    );
    const context = { sessionId: "part-faults", workdir: "/workspace" };
    const runtime = await provider.create(context);
    try {
      await run(runtime, FORTY_FILES);
      const published = await manifests();
      fault = { part: "part-000002", body: new Uint8Array(1000) };
      expect(await refusalOf(runtime.checkpoint({ kind: "filesystem" }))).toMatch(
        /^sandbox_failed: archive part part-000002 arrived with 1000 of 65536 bytes/,
      );
      fault = { part: "part-000005", body: new Uint8Array(0) };
      expect(await refusalOf(runtime.checkpoint({ kind: "filesystem" }))).toMatch(
        /^sandbox_failed: archive part part-000005 arrived with 0 of 65536 bytes/,
      );
      expect(await manifests()).toEqual(published);
      fault = null;
      const expected = await run(runtime, DESCRIBE_WORKSPACE);
      // A refused checkpoint leaves nothing in the workspace, not even while its archiving was still ahead.
      expect(expected).not.toContain(".oma-checkpoint-");
      const handle = await runtime.checkpoint({ kind: "filesystem" });
      const restored = await provider.restore(handle, context);
      expect(await run(restored, DESCRIBE_WORKSPACE)).toBe(expected);
      await restored.destroy();
    } finally {
      await runtime.destroy();
    }
  }, 300_000);

  it("refuses a checkpoint when a file changes (same size, new bytes) after the sandbox hashed it, while its contents are transferred", async () => {
    let tree = "";
    let armed = false;
    let changed = false;
    // Uncompressed: a compressor would read ahead of the parts by more than the last file.
    const { provider } = components((part) => {
      // The sandbox is at most a few parts ahead: the last file is read after this change.
      if (armed && part === "part-000000" && !changed) {
        writeFileSync(join(tree, "data/f49"), Buffer.alloc(65536, 7));
        changed = true;
      }
      return undefined;
    }, "off");
    const context = { sessionId: "changed-during-transfer", workdir: "/workspace" };
    // The session's first checkpoint streams the workspace and hashes it as it arrives: nothing to contradict.
    const first = await provider.create(context);
    await run(first, "printf seed > seed.txt");
    await first.checkpoint({ kind: "filesystem" });
    await first.destroy();
    // A sandbox without a listing cache takes the listing: its hashes come first, the contents after.
    const runtime = await provider.create(context);
    try {
      await run(runtime, FORTY_FILES);
      tree = await workspaceTree(runtime);
      const published = await manifests();
      armed = true;
      expect(await refusalOf(runtime.checkpoint({ kind: "filesystem" }))).toMatch(
        /^sandbox_failed: a workspace file changed while it was checkpointed/,
      );
      expect(changed).toBe(true);
      expect(await manifests()).toEqual(published);
    } finally {
      await runtime.destroy();
    }
  }, 300_000);
});
