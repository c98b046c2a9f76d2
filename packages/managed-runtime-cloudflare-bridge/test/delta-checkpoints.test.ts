import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import type { SandboxCheckpointHandle } from "@open-managed-agents/runtime-resource-contract";
import type { ManagedSandboxRuntime } from "@open-managed-agents/sandbox";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { manifestKeyOf, sessionKeyOf } from "../src/checkpoint/blob-keys.js";
import { createBridgeSandboxComponents } from "../src/driver.js";
import { sweepBridgeCheckpointBlobs } from "../src/index.js";
import { resolveBridgeOptions } from "../src/options.js";
import { DESCRIBE_WORKSPACE } from "./random-workspace.js";
import { codeOf, run } from "./runtime-helpers.js";

// The driver's temporary files (spools, copies of bases read ahead), counted while open.
const spools = vi.hoisted(() => ({ open: 0 }));
vi.mock("../src/checkpoint/temporary-file.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../src/checkpoint/temporary-file.js")>();
  return {
    ...original,
    async openTemporaryFile(directory?: string) {
      const file = await original.openTemporaryFile(directory);
      spools.open += 1;
      let closed = false;
      return {
        ...file,
        close() {
          if (!closed) spools.open -= 1;
          closed = true;
          return file.close();
        },
      };
    },
  };
});

// Cloudflare's bridge Worker in local workerd over the local container runtime; a filesystem blob store.
let bridge: LocalBridge;
let storeDir: string;
let store: BlobStore;
const requests: string[] = [];

beforeAll(async () => {
  bridge = await startLocalBridge();
  storeDir = await mkdtemp(join(tmpdir(), "oma-bridge-delta-"));
  store = createFsBlobStore({ rootDir: storeDir });
}, 120_000);
afterAll(async () => {
  await bridge?.stop();
  if (storeDir) await rm(storeDir, { recursive: true, force: true });
});

/** A driver of its own: a second call is a driver that never saw the session (another process, a restart). */
function components() {
  const recording: typeof fetch = (input, init) => {
    requests.push(`${init?.method ?? "GET"} ${new URL(String(input)).pathname}`);
    return fetch(input, init);
  };
  return createBridgeSandboxComponents(
    resolveBridgeOptions({
      baseUrl: bridge.url,
      apiKey: bridge.apiKey,
      checkpointStore: store,
      fetch: recording,
      singleRequestBytes: 64 * 1024,
      partBytes: 64 * 1024,
    }),
  );
}

const DESCRIBE = [DESCRIBE_WORKSPACE, "sha256sum $(find . -type f | sort) 2>&1"];
const prefix = "cloudflare-bridge-workspaces";

/** A checkpoint's manifest as stored: its first line and the paths its other lines name. */
async function manifestOf(handle: SandboxCheckpointHandle) {
  const session = String(handle.metadata?.session);
  const object = await store.get(
    manifestKeyOf(prefix, session, handle.checkpointId.slice("sha256:".length)),
  );
  const [header = "", ...lines] = (await new Response(object?.stream()).text())
    .trimEnd()
    .split("\n");
  const items = lines
    .map((line) => JSON.parse(line) as { type: string; path?: string })
    .filter((item) => item.type !== "pack");
  return {
    header: JSON.parse(header) as { format: string; base?: string },
    paths: items.map((item) => `${item.type === "removed" ? "-" : ""}${item.path}`),
  };
}

async function describeOf(runtime: ManagedSandboxRuntime) {
  return Promise.all(DESCRIBE.map((script) => run(runtime, script)));
}

async function expectRestores(
  provider: ReturnType<typeof components>["provider"],
  handle: SandboxCheckpointHandle,
  context: { sessionId: string; workdir: string },
  expected: readonly string[],
) {
  const restored = await provider.restore(handle, context);
  try {
    expect(await describeOf(restored)).toEqual(expected);
  } finally {
    await restored.destroy();
  }
}

describe("delta checkpoints", () => {
  it("writes later checkpoints as one delta of every change since a full base, in a driver that never saw the session too, and a full manifest when the base is damaged or the delta outgrows it", async () => {
    const { provider } = components();
    const context = { sessionId: "delta-chain", workdir: "/workspace" };
    const runtime = await provider.create(context);
    const sha = (handle: SandboxCheckpointHandle) => handle.checkpointId.slice("sha256:".length);
    try {
      await run(
        runtime,
        "mkdir -p a b && for i in $(seq 1 30); do printf $i > a/f$i; done && printf big > b/x && head -c 300000 /dev/urandom > b/large && ln -s a/f1 link",
      );
      const first = await runtime.checkpoint({ kind: "filesystem" });
      expect((await manifestOf(first)).header).toEqual({ format: "oma-workspace-manifest/3" });

      // The folders' mtimes are set apart from the first pass's second: a manifest keeps whole seconds, and an
      // entry that reads the same there is no change.
      await run(
        runtime,
        "printf changed > a/f2 && rm a/f3 && printf new > b/y && touch -d @1700000000 a b",
      );
      const secondState = await describeOf(runtime);
      requests.length = 0;
      const second = await runtime.checkpoint({ kind: "filesystem" });
      // Only the records that changed came over the bridge, and only the changed lines were written.
      expect(requests.some((request) => /\/\.oma-manifest-[^/]+\/records$/.test(request))).toBe(
        false,
      );
      const secondManifest = await manifestOf(second);
      expect(secondManifest.header).toEqual({
        format: "oma-workspace-manifest/4",
        base: sha(first),
        baseSize: first.metadata?.size,
      });
      expect(secondManifest.paths).toEqual(["a", "a/f2", "-a/f3", "b", "b/y"]);

      await run(runtime, "chmod 600 a/f4 && ln -sfn b/x link");
      const third = await runtime.checkpoint({ kind: "filesystem" });
      const thirdManifest = await manifestOf(third);
      // Over the same base, holding the second's changes as well: a workspace is never more than two manifests deep.
      expect(thirdManifest.header.base).toBe(sha(first));
      expect(thirdManifest.paths).toEqual(["a", "a/f2", "-a/f3", "a/f4", "b", "b/y", "link"]);
      const thirdState = await describeOf(runtime);

      // A driver that never saw the session finds the delta through the latest-manifest hint.
      const fresh = components().provider;
      const connected = await fresh.connect(runtime.runtimeHandle().runtimeId, context);
      await run(connected, "printf again > a/f5");
      const fourth = await connected.checkpoint({ kind: "filesystem" });
      expect((await manifestOf(fourth)).header.base).toBe(sha(first));
      expect((await manifestOf(fourth)).paths).toContain("a/f5");
      const fourthState = await describeOf(runtime);

      await expectRestores(provider, second, context, secondState);
      await expectRestores(fresh, third, context, thirdState);
      await expectRestores(fresh, fourth, context, fourthState);

      // A base whose objects a sweep took while keeping the base: the next driver that never saw the
      // session finds out and writes a full manifest.
      const own = `${prefix}/sessions/${sessionKeyOf("delta-chain")}/`;
      const blob = (await store.list({ prefix: `${own}blobs/` })).objects[0];
      expect(blob).toBeDefined();
      if (blob) await store.delete(blob.key);
      const rebuilt = await components().provider.connect(
        runtime.runtimeHandle().runtimeId,
        context,
      );
      await run(rebuilt, "printf fifth > a/f6");
      const fifth = await rebuilt.checkpoint({ kind: "filesystem" });
      expect((await manifestOf(fifth)).header).toEqual({ format: "oma-workspace-manifest/3" });
      await expectRestores(provider, fifth, context, await describeOf(runtime));

      // More changed lines than a delta holds (an eighth of the entries, at least 1,024): a full manifest.
      // (The driver that took the last checkpoint takes the next ones: its pass is the sandbox's.)
      await run(rebuilt, "printf sixth > a/f7");
      const sixth = await rebuilt.checkpoint({ kind: "filesystem" });
      expect((await manifestOf(sixth)).header.base).toBe(sha(fifth));
      await run(rebuilt, "mkdir many && cd many && for i in $(seq 1 1100); do : > e$i; done");
      const compacted = await rebuilt.checkpoint({ kind: "filesystem" });
      expect((await manifestOf(compacted)).header).toEqual({ format: "oma-workspace-manifest/3" });
      const compactedState = await describeOf(runtime);
      await run(rebuilt, "rm many/e1");
      const after = await rebuilt.checkpoint({ kind: "filesystem" });
      expect((await manifestOf(after)).header.base).toBe(sha(compacted));
      await expectRestores(provider, compacted, context, compactedState);
      await expectRestores(provider, after, context, await describeOf(runtime));
      // A sandbox whose listing cache is gone: the base read ahead is stopped and the full listing decides.
      await run(rebuilt, "rm -rf /tmp/.oma-manifest-cache && printf last > a/f8");
      const uncached = await rebuilt.checkpoint({ kind: "filesystem" });
      expect((await manifestOf(uncached)).header).toEqual({ format: "oma-workspace-manifest/3" });
      await expectRestores(provider, uncached, context, await describeOf(runtime));
      // Every temporary file is closed again, the copies of the bases read ahead among them (a delta taken,
      // given up for a full manifest, or outgrown): its name is gone once it is open, so only its handle would stay.
      expect(spools.open).toBe(0);
    } finally {
      await runtime.destroy();
    }
  }, 300_000);

  it("sweeps keep a published delta's base and what it places there, and let the base go once no published checkpoint lies over it", async () => {
    const { provider } = components();
    const context = { sessionId: "delta-sweep", workdir: "/workspace" };
    const runtime = await provider.create(context);
    const own = `${prefix}/sessions/${sessionKeyOf("delta-sweep")}/`;
    const manifests = async () => (await store.list({ prefix: `${own}manifests/` })).objects.length;
    try {
      await run(runtime, "printf one > kept && printf two > gone");
      const first = await runtime.checkpoint({ kind: "filesystem" });
      await run(runtime, "rm gone && printf three > added");
      const second = await runtime.checkpoint({ kind: "filesystem" });
      expect((await manifestOf(second)).header.format).toBe("oma-workspace-manifest/4");
      const now = () => new Date(Date.now() + 1_000);
      await sweepBridgeCheckpointBlobs({
        checkpointStore: store,
        sessionId: "delta-sweep",
        published: [second],
        graceMs: 0,
        now,
      });
      expect(await manifests()).toBe(2);
      await expectRestores(provider, second, context, await describeOf(runtime));
      // A full manifest published alone: the base and the delta go, and with them what only they placed.
      await run(runtime, `mkdir many && cd many && for i in $(seq 1 1100); do : > e$i; done`);
      const full = await runtime.checkpoint({ kind: "filesystem" });
      expect((await manifestOf(full)).header.format).toBe("oma-workspace-manifest/3");
      await sweepBridgeCheckpointBlobs({
        checkpointStore: store,
        sessionId: "delta-sweep",
        published: [full],
        graceMs: 0,
        now,
      });
      expect(await manifests()).toBe(1);
      expect(await codeOf(provider.restore(first, context))).toBe("not_found");
      expect(await codeOf(provider.restore(second, context))).toBe("not_found");
      await expectRestores(provider, full, context, await describeOf(runtime));
    } finally {
      await runtime.destroy();
    }
  }, 300_000);
});
