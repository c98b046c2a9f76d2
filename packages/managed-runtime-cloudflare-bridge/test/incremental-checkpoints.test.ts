import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import { ManagedRuntimeError, type SandboxCheckpointHandle } from "@open-managed-agents/runtime-resource-contract";
import type { ManagedSandboxRuntime } from "@open-managed-agents/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBridgeSandboxComponents } from "../src/driver.js";
import { sweepBridgeCheckpointBlobs } from "../src/index.js";
import { resolveBridgeOptions } from "../src/options.js";
import { DESCRIBE_WORKSPACE, mutationScript, prng } from "./random-workspace.js";

// Cloudflare's bridge Worker in local workerd over the local container runtime; a filesystem blob store.
let bridge: LocalBridge;
let storeDir: string;
let store: BlobStore;
const requests: string[] = [];
const puts: string[] = [];

beforeAll(async () => {
  bridge = await startLocalBridge();
  storeDir = await mkdtemp(join(tmpdir(), "oma-bridge-incremental-"));
  const fsStore = createFsBlobStore({ rootDir: storeDir });
  store = { ...fsStore, put: (key, body, options) => (puts.push(key), fsStore.put(key, body, options)) };
}, 120_000);
afterAll(async () => {
  await bridge?.stop();
  if (storeDir) await rm(storeDir, { recursive: true, force: true });
});

function components(overrides: { fetch?: typeof fetch } = {}) {
  const recording: typeof fetch = (input, init) => {
    requests.push(`${init?.method ?? "GET"} ${new URL(String(input)).pathname.replace(/\/v1\/sandbox\/[a-z2-7]+/, "/v1/sandbox/:id")}`);
    return (overrides.fetch ?? fetch)(input, init);
  };
  const resolved = resolveBridgeOptions({ baseUrl: bridge.url, apiKey: bridge.apiKey, checkpointStore: store, fetch: recording, singleRequestBytes: 64 * 1024, partBytes: 64 * 1024 });
  return createBridgeSandboxComponents(resolved);
}

async function run(runtime: ManagedSandboxRuntime, script: string): Promise<string> {
  const result = await runtime.exec(script);
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout;
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => null, (caught: unknown) => caught);
  return ManagedRuntimeError.isInstance(error) ? error.code : `not refused: ${String(error)}`;
}

const blobKeys = async (prefix: string) => (await store.list({ prefix })).objects.map((object) => object.key);

describe("incremental bridge checkpoints", () => {
  it("round-trips random trees through chains of 5 checkpoints, byte-identical with modes, links, empty folders and deletions (30 seeds)", async () => {
    const { provider } = components();
    for (let seed = 1; seed <= 30; seed += 1) {
      const random = prng(seed);
      const context = { sessionId: `seed-${seed}`, workdir: "/workspace" };
      let runtime = await provider.create(context);
      try {
        for (let step = 0; step < 5; step += 1) {
          await run(runtime, mutationScript(random, step));
          const before = await run(runtime, DESCRIBE_WORKSPACE);
          const handle = await runtime.checkpoint({ kind: "filesystem" });
          await runtime.destroy();
          runtime = await provider.restore(handle, context);
          expect(await run(runtime, DESCRIBE_WORKSPACE), `seed ${seed} step ${step}`).toBe(before);
        }
      } finally {
        await runtime.destroy();
      }
    }
    expect(bridge.containerServer.containers.list()).toEqual([]);
  }, 900_000);

  it("restores directories the owner cannot write, with their modes, into a sandbox whose root holds no capability", async () => {
    const { provider } = components();
    const context = { sessionId: "read-only-dirs", workdir: "/workspace" };
    let runtime = await provider.create(context);
    try {
      // A Go-module-cache-like 0555 tree holding a 0500 directory: tar as uid 0 would keep their owner bits
      // while extracting into them, which only a root with CAP_DAC_OVERRIDE gets away with.
      await run(runtime, "mkdir -p mod/pkg/sub && echo hi > mod/pkg/sub/f && chmod -R a-w mod && chmod 500 mod/pkg/sub");
      const describe = "stat -c '%n %a' mod mod/pkg mod/pkg/sub mod/pkg/sub/f && cat mod/pkg/sub/f";
      const before = await run(runtime, describe);
      expect(before).toBe("mod 555\nmod/pkg 555\nmod/pkg/sub 500\nmod/pkg/sub/f 444\nhi\n");
      const handle = await runtime.checkpoint({ kind: "filesystem" });
      await runtime.destroy();
      runtime = await provider.restore(handle, context);
      expect(await run(runtime, describe)).toBe(before);
    } finally {
      await runtime.destroy();
    }
  }, 120_000);

  it("transfers only content the store lacks, and the handle id is the manifest's hash", async () => {
    const { provider } = components();
    const context = { sessionId: "only-changes", workdir: "/workspace" };
    const runtime = await provider.create(context);
    try {
      await run(runtime, "for i in $(seq 1 100); do head -c 20000 /dev/urandom > f$i; done");
      puts.length = 0;
      const first = await runtime.checkpoint({ kind: "filesystem" });
      expect(puts.filter((key) => key.includes("/blobs/"))).toHaveLength(100);
      await run(runtime, "head -c 20000 /dev/urandom > f7");
      puts.length = 0;
      requests.length = 0;
      const second = await runtime.checkpoint({ kind: "filesystem" });
      expect(puts.filter((key) => key.includes("/blobs/"))).toHaveLength(1);
      expect(puts.filter((key) => key.includes("/manifests/"))).toHaveLength(1);
      // Two listing GETs and one part of the changed file, not a hundred files' worth.
      expect(requests.filter((request) => request.startsWith("GET") && request.includes("/file/")).length).toBeLessThanOrEqual(3);
      expect(second.checkpointId).not.toBe(first.checkpointId);
      const manifestKey = puts.find((key) => key.includes("/manifests/")) as string;
      expect(manifestKey.endsWith(`${second.checkpointId.slice("sha256:".length)}.json`)).toBe(true);
    } finally {
      await runtime.destroy();
    }
  }, 300_000);

  it("refuses a tampered blob or manifest before any sandbox exists or any byte is hydrated", async () => {
    const { provider } = components();
    const context = { sessionId: "tamper", workdir: "/workspace" };
    const runtime = await provider.create(context);
    let handle: SandboxCheckpointHandle;
    try {
      await run(runtime, "printf 'original' > a.txt && mkdir -p d && printf 'other' > d/b.txt");
      handle = await runtime.checkpoint({ kind: "filesystem" });
    } finally {
      await runtime.destroy();
    }
    const own = `cloudflare-bridge-workspaces/sessions/${String(handle.metadata?.session)}/`;
    const [blob] = await blobKeys(`${own}blobs/`);
    const [manifest] = (await blobKeys(`${own}manifests/`)).filter((key) => key.includes(handle.checkpointId.slice("sha256:".length)));
    for (const key of [blob as string, manifest as string]) {
      const original = new Uint8Array(await new Response((await store.get(key))?.stream()).arrayBuffer());
      const tampered = new Uint8Array(original);
      tampered[0] = (tampered[0] ?? 0) ^ 0x01;
      await store.delete(key);
      await store.put(key, tampered);
      requests.length = 0;
      expect(await codeOf(provider.restore(handle, context)), key).toBe("integrity_failed");
      expect(requests).toEqual([]);
      await store.delete(key);
      await store.put(key, original);
    }
    const restored = await provider.restore(handle, context);
    expect(await run(restored, "cat a.txt d/b.txt")).toBe("originalother");
    await restored.destroy();
  }, 300_000);

  it("publishes nothing when a checkpoint is interrupted mid-transfer, and the next one works", async () => {
    let failPartGets = false;
    const flaky: typeof fetch = (input, init) => {
      if (failPartGets && String(input).includes("part-")) return Promise.reject(new TypeError("connection reset mid-transfer"));
      return fetch(input, init);
    };
    const { provider } = components({ fetch: flaky });
    const context = { sessionId: "interrupted", workdir: "/workspace" };
    const runtime = await provider.create(context);
    try {
      await run(runtime, "head -c 300000 /dev/urandom > big.bin && printf small > small.txt");
      const manifests = async () => (await blobKeys("cloudflare-bridge-workspaces/sessions/")).filter((key) => key.includes("/manifests/"));
      const before = await manifests();
      failPartGets = true;
      expect(await codeOf(runtime.checkpoint({ kind: "filesystem" }))).not.toMatch(/^not refused/);
      failPartGets = false;
      expect(await manifests()).toEqual(before);
      const handle = await runtime.checkpoint({ kind: "filesystem" });
      const expected = await run(runtime, "sha256sum big.bin small.txt");
      const restored = await provider.restore(handle, context);
      expect(await run(restored, "sha256sum big.bin small.txt")).toBe(expected);
      await restored.destroy();
    } finally {
      await runtime.destroy();
    }
  }, 300_000);

  it("keeps sessions apart: same content is stored under each session's prefix, and a session cannot restore another's checkpoint", async () => {
    const { provider } = components();
    const handles: SandboxCheckpointHandle[] = [];
    for (const sessionId of ["alice", "bob"]) {
      const runtime = await provider.create({ sessionId, workdir: "/workspace" });
      await run(runtime, `printf 'identical content' > same.txt && printf '${sessionId}' > owner.txt`);
      handles.push(await runtime.checkpoint({ kind: "filesystem" }));
      await runtime.destroy();
    }
    const [alice, bob] = handles as [SandboxCheckpointHandle, SandboxCheckpointHandle];
    expect(alice.metadata?.session).not.toBe(bob.metadata?.session);
    for (const session of [alice.metadata?.session, bob.metadata?.session]) {
      expect((await blobKeys(`cloudflare-bridge-workspaces/sessions/${String(session)}/blobs/`)).length).toBe(2);
    }
    requests.length = 0;
    expect(await codeOf(provider.restore(alice, { sessionId: "bob", workdir: "/workspace" }))).toBe("integrity_failed");
    // A handle edited to name the other session finds a manifest that is not there (or not its hash).
    expect(await codeOf(provider.restore({ ...alice, metadata: { ...alice.metadata, session: String(bob.metadata?.session) } }, { sessionId: "bob", workdir: "/workspace" }))).toMatch(/not_found|integrity_failed/);
    expect(requests).toEqual([]);
  }, 300_000);

  it("sweeps blobs and manifests no published checkpoint references, after the grace period, never during a checkpoint", async () => {
    const { provider } = components();
    const context = { sessionId: "sweep", workdir: "/workspace" };
    const runtime = await provider.create(context);
    try {
      await run(runtime, "printf one > kept.txt && printf two > dropped.txt");
      const first = await runtime.checkpoint({ kind: "filesystem" });
      await run(runtime, "rm dropped.txt && printf three > added.txt");
      const second = await runtime.checkpoint({ kind: "filesystem" });
      const own = `cloudflare-bridge-workspaces/sessions/${String(second.metadata?.session)}/`;
      expect(await blobKeys(own)).toHaveLength(5);
      const options = { checkpointStore: store, sessionId: "sweep", published: [second] };
      expect(await sweepBridgeCheckpointBlobs({ ...options, graceMs: 3_600_000 })).toEqual({ kept: 5, deleted: 0 });
      const order: string[] = [];
      await run(runtime, "printf four > later.txt");
      const running = runtime.checkpoint({ kind: "filesystem" }).then((handle) => (order.push("checkpoint"), handle));
      const swept = sweepBridgeCheckpointBlobs({ ...options, published: [second], graceMs: 0, now: () => new Date(Date.now() + 1_000) }).then((result) => (order.push("sweep"), result));
      const [third, result] = await Promise.all([running, swept]);
      expect(order).toEqual(["checkpoint", "sweep"]);
      // Gone: the first manifest, dropped.txt's blob, and the third checkpoint (not published); kept: the second.
      expect(result).toEqual({ kept: 3, deleted: 4 });
      expect(await codeOf(provider.restore(first, context))).toBe("not_found");
      expect(await codeOf(provider.restore(third, context))).toBe("not_found");
      const restored = await provider.restore(second, context);
      expect(await run(restored, "cat kept.txt added.txt")).toBe("onethree");
      await restored.destroy();
      // The next checkpoint re-sends what the sweep collected instead of trusting what it remembered.
      const fourth = await runtime.checkpoint({ kind: "filesystem" });
      const again = await provider.restore(fourth, context);
      expect(await run(again, "cat later.txt")).toBe("four");
      await again.destroy();
    } finally {
      await runtime.destroy();
    }
  }, 300_000);

  it("compresses the transfer when a sample shows it pays, and not for random bytes", async () => {
    const { provider } = components();
    const context = { sessionId: "compression", workdir: "/workspace" };
    const runtime = await provider.create(context);
    const partGets = () => requests.filter((request) => request.startsWith("GET") && request.includes("/part-")).length;
    try {
      // 3 MiB of text in 48 parts of 64 KiB uncompressed; gzip -1 shrinks it far below that.
      await run(runtime, "mkdir -p text && seq 1 400000 | sed 's/^/line number /' | head -c 3145728 | split -b 65536 -a 3 -d - text/f");
      requests.length = 0;
      const text = await runtime.checkpoint({ kind: "filesystem" });
      expect(partGets()).toBeLessThan(16);
      await run(runtime, "mkdir -p noise && head -c 3145728 /dev/urandom | split -b 65536 -a 3 -d - noise/f");
      requests.length = 0;
      const noise = await runtime.checkpoint({ kind: "filesystem" });
      expect(partGets()).toBeGreaterThanOrEqual(48);
      const expected = await run(runtime, DESCRIBE_WORKSPACE);
      for (const handle of [noise]) {
        const restored = await provider.restore(handle, context);
        expect(await run(restored, DESCRIBE_WORKSPACE)).toBe(expected);
        await restored.destroy();
      }
      expect(text.checkpointId).not.toBe(noise.checkpointId);
    } finally {
      await runtime.destroy();
    }
  }, 300_000);

  it("still restores an older full-tar handle", async () => {
    const { provider, checkpointer } = components();
    const runtime = await provider.create({ sessionId: "legacy", workdir: "/workspace" });
    await run(runtime, "mkdir -p old && printf 'from a full tar' > old/file.txt");
    const handle = await checkpointer.checkpoint({ sandboxId: runtime.runtimeHandle().runtimeId });
    await runtime.destroy();
    expect(handle.metadata?.blobKey).toMatch(/\.tar$/);
    const restored = await provider.restore(handle, { sessionId: "legacy", workdir: "/workspace" });
    expect(await run(restored, "cat old/file.txt")).toBe("from a full tar");
    await restored.destroy();
  }, 300_000);
});
