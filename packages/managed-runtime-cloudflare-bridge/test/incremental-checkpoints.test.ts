import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import type { SandboxCheckpointHandle } from "@open-managed-agents/runtime-resource-contract";
import type { ManagedSandboxRuntime } from "@open-managed-agents/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { blobKeyOf, manifestKeyOf, packKeyOf, sessionKeyOf } from "../src/checkpoint/blob-keys.js";
import { createManifestHandle } from "../src/checkpoint/manifest-handle.js";
import { CLOUDFLARE_BRIDGE_PROVIDER, createBridgeSandboxComponents } from "../src/driver.js";
import { sweepBridgeCheckpointBlobs } from "../src/index.js";
import { resolveBridgeOptions } from "../src/options.js";
import { encodeManifestV2 } from "./legacy-manifest.js";
import { DESCRIBE_WORKSPACE, mutationScript, prng } from "./random-workspace.js";
import { codeOf, run } from "./runtime-helpers.js";

// Cloudflare's bridge Worker in local workerd over the local container runtime; a filesystem blob store.
let bridge: LocalBridge;
let storeDir: string;
let store: BlobStore;
const requests: string[] = [];
const puts: string[] = [];
/** The script of every exec, in order. */
const execs: string[] = [];

beforeAll(async () => {
  bridge = await startLocalBridge();
  storeDir = await mkdtemp(join(tmpdir(), "oma-bridge-incremental-"));
  const fsStore = createFsBlobStore({ rootDir: storeDir });
  store = {
    ...fsStore,
    put: (key, body, options) => (puts.push(key), fsStore.put(key, body, options)),
  };
}, 120_000);
afterAll(async () => {
  await bridge?.stop();
  if (storeDir) await rm(storeDir, { recursive: true, force: true });
});

function components(
  overrides: { fetch?: typeof fetch; compression?: "auto" | "gzip" | "off" } = {},
) {
  const recording: typeof fetch = (input, init) => {
    requests.push(
      `${init?.method ?? "GET"} ${new URL(String(input)).pathname.replace(/\/v1\/sandbox\/[a-z2-7]+/, "/v1/sandbox/:id")}`,
    );
    if (String(input).endsWith("/exec") && typeof init?.body === "string")
      execs.push((JSON.parse(init.body) as { argv: string[] }).argv.join(" "));
    return (overrides.fetch ?? fetch)(input, init);
  };
  const resolved = resolveBridgeOptions({
    baseUrl: bridge.url,
    apiKey: bridge.apiKey,
    checkpointStore: store,
    fetch: recording,
    singleRequestBytes: 64 * 1024,
    partBytes: 64 * 1024,
    ...(overrides.compression ? { compression: overrides.compression } : {}),
  });
  return createBridgeSandboxComponents(resolved);
}

/** Checkpoints `runtime`, restores it into a fresh sandbox and expects each `describe` script to print the same there. */
async function expectRestoredAlike(
  provider: ReturnType<typeof components>["provider"],
  runtime: ManagedSandboxRuntime,
  context: { sessionId: string; workdir: string },
  describe: readonly string[],
) {
  const before = await Promise.all(describe.map((script) => run(runtime, script)));
  const handle = await runtime.checkpoint({ kind: "filesystem" });
  const restored = await provider.restore(handle, context);
  try {
    expect(await Promise.all(describe.map((script) => run(restored, script)))).toEqual(before);
  } finally {
    await restored.destroy();
  }
}

const blobKeys = async (prefix: string) =>
  (await store.list({ prefix })).objects.map((object) => object.key);

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
      await run(
        runtime,
        "mkdir -p mod/pkg/sub && echo hi > mod/pkg/sub/f && chmod -R a-w mod && chmod 500 mod/pkg/sub",
      );
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
      // A hundred small contents share one pack object: one store call, not a hundred.
      expect(puts.filter((key) => key.includes("/blobs/"))).toHaveLength(0);
      expect(puts.filter((key) => key.includes("/packs/"))).toHaveLength(1);
      await run(runtime, "head -c 20000 /dev/urandom > f7");
      puts.length = 0;
      requests.length = 0;
      const second = await runtime.checkpoint({ kind: "filesystem" });
      expect(puts.filter((key) => key.includes("/packs/") || key.includes("/blobs/"))).toHaveLength(
        1,
      );
      expect(puts.filter((key) => key.includes("/manifests/"))).toHaveLength(1);
      // Two small GETs of the listing's delta (records lost and gained) and one part of the changed file, not a hundred files' worth.
      expect(
        requests.filter((request) => request.startsWith("GET") && request.includes("/file/"))
          .length,
      ).toBeLessThanOrEqual(3);
      expect(second.checkpointId).not.toBe(first.checkpointId);
      const manifestKey = puts.find((key) => key.includes("/manifests/")) as string;
      expect(manifestKey.endsWith(`${second.checkpointId.slice("sha256:".length)}.json`)).toBe(
        true,
      );
      // A driver that never saw this session finds the stored packs through its latest manifest.
      await run(runtime, "printf changed > f8");
      puts.length = 0;
      const { checkpointer: restarted } = components();
      await restarted.checkpoint({
        sandboxId: runtime.runtimeHandle().runtimeId,
        sessionId: "only-changes",
      });
      expect(puts.filter((key) => key.includes("/packs/") || key.includes("/blobs/"))).toHaveLength(
        1,
      );
    } finally {
      await runtime.destroy();
    }
  }, 300_000);

  it("refuses a tampered pack, blob or manifest before any sandbox exists or any byte is hydrated", async () => {
    const { provider } = components();
    const context = { sessionId: "tamper", workdir: "/workspace" };
    const runtime = await provider.create(context);
    let handle: SandboxCheckpointHandle;
    try {
      await run(
        runtime,
        "printf 'original' > a.txt && mkdir -p d && printf 'other' > d/b.txt && head -c 300000 /dev/urandom > big.bin",
      );
      handle = await runtime.checkpoint({ kind: "filesystem" });
    } finally {
      await runtime.destroy();
    }
    const own = `cloudflare-bridge-workspaces/sessions/${String(handle.metadata?.session)}/`;
    const [pack] = await blobKeys(`${own}packs/`);
    const [blob] = await blobKeys(`${own}blobs/`);
    const [manifest] = (await blobKeys(`${own}manifests/`)).filter((key) =>
      key.includes(handle.checkpointId.slice("sha256:".length)),
    );
    for (const key of [pack as string, blob as string, manifest as string]) {
      const original = new Uint8Array(
        await new Response((await store.get(key))?.stream()).arrayBuffer(),
      );
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
    expect(await run(restored, "cat a.txt d/b.txt && wc -c < big.bin")).toBe(
      "originalother300000\n",
    );
    await restored.destroy();
  }, 300_000);

  it("publishes nothing when a checkpoint is interrupted mid-transfer, and the next one works", async () => {
    let failPartGets = false;
    const flaky: typeof fetch = (input, init) => {
      if (failPartGets && String(input).includes("part-"))
        return Promise.reject(new TypeError("connection reset mid-transfer"));
      return fetch(input, init);
    };
    const { provider } = components({ fetch: flaky });
    const context = { sessionId: "interrupted", workdir: "/workspace" };
    const runtime = await provider.create(context);
    try {
      await run(runtime, "head -c 300000 /dev/urandom > big.bin && printf small > small.txt");
      const manifests = async () =>
        (await blobKeys("cloudflare-bridge-workspaces/sessions/")).filter((key) =>
          key.includes("/manifests/"),
        );
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
      await run(
        runtime,
        `printf 'identical content' > same.txt && printf '${sessionId}' > owner.txt`,
      );
      handles.push(await runtime.checkpoint({ kind: "filesystem" }));
      await runtime.destroy();
    }
    const [alice, bob] = handles as [SandboxCheckpointHandle, SandboxCheckpointHandle];
    expect(alice.metadata?.session).not.toBe(bob.metadata?.session);
    for (const session of [alice.metadata?.session, bob.metadata?.session]) {
      expect(
        (await blobKeys(`cloudflare-bridge-workspaces/sessions/${String(session)}/packs/`)).length,
      ).toBe(1);
    }
    requests.length = 0;
    expect(await codeOf(provider.restore(alice, { sessionId: "bob", workdir: "/workspace" }))).toBe(
      "integrity_failed",
    );
    // A handle edited to name the other session finds a manifest that is not there (or not its hash).
    expect(
      await codeOf(
        provider.restore(
          { ...alice, metadata: { ...alice.metadata, session: String(bob.metadata?.session) } },
          { sessionId: "bob", workdir: "/workspace" },
        ),
      ),
    ).toMatch(/not_found|integrity_failed/);
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
      // Two packs (one, two; three), two manifests and the latest-manifest pointer.
      expect(await blobKeys(own)).toHaveLength(5);
      const options = { checkpointStore: store, sessionId: "sweep", published: [second] };
      expect(await sweepBridgeCheckpointBlobs({ ...options, graceMs: 3_600_000 })).toEqual({
        kept: 5,
        deleted: 0,
      });
      const order: string[] = [];
      await run(runtime, "printf four > later.txt");
      const running = runtime
        .checkpoint({ kind: "filesystem" })
        .then((handle) => (order.push("checkpoint"), handle));
      const swept = sweepBridgeCheckpointBlobs({
        ...options,
        published: [second],
        graceMs: 0,
        now: () => new Date(Date.now() + 1_000),
      }).then((result) => (order.push("sweep"), result));
      const [third, result] = await Promise.all([running, swept]);
      expect(order).toEqual(["checkpoint", "sweep"]);
      // Gone: the third checkpoint's pack and manifest (not published). Kept: the second manifest (a delta), the
      // first manifest (its base), its new pack, the first pack, which still holds kept.txt (and dropped.txt with
      // it), and the pointer.
      expect(result).toEqual({ kept: 5, deleted: 2 });
      expect(await codeOf(provider.restore(third, context))).toBe("not_found");
      const restored = await provider.restore(second, context);
      expect(await run(restored, "cat kept.txt added.txt")).toBe("onethree");
      await restored.destroy();
      // The base stays whole: it restores on its own too.
      const base = await provider.restore(first, context);
      expect(await run(base, "cat kept.txt dropped.txt")).toBe("onetwo");
      await base.destroy();
      // The next checkpoint re-sends what the sweep collected instead of trusting what it remembered.
      const fourth = await runtime.checkpoint({ kind: "filesystem" });
      const again = await provider.restore(fourth, context);
      expect(await run(again, "cat later.txt")).toBe("four");
      await again.destroy();
    } finally {
      await runtime.destroy();
    }
  }, 300_000);

  it("compresses transfers with zstd when both ends have it, else with gzip where a sample shows it pays", async () => {
    const partGets = () =>
      requests.filter((request) => request.startsWith("GET") && request.includes("/part-")).length;
    // The archive's parts: not their hash markers, nor the listing's parts the verification receives.
    const partPuts = () =>
      requests.filter(
        (request) =>
          request.startsWith("PUT") && /\.oma-restore-[0-9a-f-]+\/part-\d+$/.test(request),
      ).length;
    // The transfer's own pipeline (not the sample) runs through the compressor.
    const through = (compressor: string) =>
      execs.some((script) => script.includes("split -b") && script.includes(`| ${compressor}`));
    // 3 MiB of text: 48 parts of 64 KiB uncompressed, far fewer compressed; and 3 MiB of random bytes.
    const text =
      "mkdir -p text && seq 1 400000 | sed 's/^/line number /' | head -c 3145728 | split -b 65536 -a 3 -d - text/f";
    const noise =
      "mkdir -p noise && head -c 3145728 /dev/urandom | split -b 65536 -a 3 -d - noise/f";
    const checkpointOf = async (
      provider: ReturnType<typeof components>["provider"],
      sessionId: string,
      script: string,
    ) => {
      const runtime = await provider.create({ sessionId, workdir: "/workspace" });
      try {
        await run(runtime, script);
        const tree = await run(runtime, DESCRIBE_WORKSPACE);
        requests.length = 0;
        execs.length = 0;
        const handle = await runtime.checkpoint({ kind: "filesystem" });
        return { handle, tree, gets: partGets(), zstd: through("zstd"), gzip: through("gzip") };
      } finally {
        await runtime.destroy();
      }
    };
    const restoreOf = async (
      provider: ReturnType<typeof components>["provider"],
      sessionId: string,
      taken: Awaited<ReturnType<typeof checkpointOf>>,
    ) => {
      requests.length = 0;
      execs.length = 0;
      const restored = await provider.restore(taken.handle, { sessionId, workdir: "/workspace" });
      try {
        expect(await run(restored, DESCRIBE_WORKSPACE)).toBe(taken.tree);
      } finally {
        await restored.destroy();
      }
      // restore.sh's arguments: `extract` or `restore`, then `<folder> <codec> <errors>`.
      const codec =
        execs
          .map((script) => / restore\.sh (?:extract|restore) \S+ (\w+) /.exec(script)?.[1])
          .find(Boolean) ?? "";
      return {
        puts: partPuts(),
        hydrates: requests.filter((request) => request.endsWith("/hydrate")).length,
        zstd: codec === "zstd",
        gzip: codec === "gzip",
      };
    };

    // zstd on both ends (this host and the local containers have it): always, since it costs little even on random bytes.
    const auto = components();
    const autoText = await checkpointOf(auto.provider, "compression-auto-text", text);
    expect(autoText).toMatchObject({ zstd: true, gzip: false });
    expect(autoText.gets).toBeLessThan(16);
    const autoNoise = await checkpointOf(auto.provider, "compression-auto-noise", noise);
    expect(autoNoise).toMatchObject({ zstd: true, gzip: false });
    expect(autoNoise.gets).toBeGreaterThanOrEqual(48);
    expect(await restoreOf(auto.provider, "compression-auto-text", autoText)).toMatchObject({
      zstd: true,
      hydrates: 0,
    });
    expect(await restoreOf(auto.provider, "compression-auto-noise", autoNoise)).toMatchObject({
      zstd: true,
      hydrates: 0,
    });

    // gzip only: the text pays, random bytes do not (and a folder of tiny files ahead of them does not fool the sample).
    const gzip = components({ compression: "gzip" });
    const gzipText = await checkpointOf(gzip.provider, "compression-gzip-text", text);
    expect(gzipText).toMatchObject({ zstd: false, gzip: true });
    expect(gzipText.gets).toBeLessThan(16);
    const gzipNoise = await checkpointOf(
      gzip.provider,
      "compression-gzip-noise",
      `mkdir -p a-tiny && for i in $(seq 1 2000); do printf 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' > a-tiny/f$i; done && ${noise}`,
    );
    expect(gzipNoise).toMatchObject({ zstd: false, gzip: false });
    expect(gzipNoise.gets).toBeGreaterThanOrEqual(48);
    const fromText = await restoreOf(gzip.provider, "compression-gzip-text", gzipText);
    expect(fromText).toMatchObject({ zstd: false, gzip: true, hydrates: 0 });
    expect(fromText.puts).toBeLessThan(16);
    const fromNoise = await restoreOf(gzip.provider, "compression-gzip-noise", gzipNoise);
    expect(fromNoise).toMatchObject({ zstd: false, gzip: false, hydrates: 0 });
    expect(fromNoise.puts).toBeGreaterThanOrEqual(48);

    // Off: neither.
    const off = await checkpointOf(
      components({ compression: "off" }).provider,
      "compression-off",
      text,
    );
    expect(off).toMatchObject({ zstd: false, gzip: false });
    expect(off.gets).toBeGreaterThanOrEqual(48);
  }, 300_000);

  it("asks for zstd with a later checkpoint's scratch folder, and takes gzip by sample when the sandbox lacks zstd", async () => {
    // A sandbox without zstd, made by asking it for a command no sandbox has.
    const withoutZstd: typeof fetch = (input, init) => {
      const body =
        String(input).endsWith("/exec") && typeof init?.body === "string"
          ? init.body.replaceAll("command -v zstd", "command -v zstd-not-installed")
          : init?.body;
      return fetch(input, { ...init, body });
    };
    const text =
      "mkdir -p text && seq 1 400000 | sed 's/^/line number /' | head -c 3145728 | split -b 65536 -a 3 -d - text/f";
    const noise =
      "mkdir -p noise && head -c 3145728 /dev/urandom | split -b 65536 -a 3 -d - noise/f";
    const laterCheckpoint = async (
      provider: ReturnType<typeof components>["provider"],
      sessionId: string,
      change: string,
    ) => {
      const context = { sessionId, workdir: "/workspace" };
      const runtime = await provider.create(context);
      try {
        await run(runtime, "printf first > a.txt");
        await runtime.checkpoint({ kind: "filesystem" });
        await run(runtime, change);
        execs.length = 0;
        await expectRestoredAlike(provider, runtime, context, [
          DESCRIBE_WORKSPACE,
          "sha256sum $(find . -type f | sort) | sha256sum",
        ]);
        const transfer =
          execs.find(
            (script) => script.includes("split -b") && script.includes("xargs -0 -r cat"),
          ) ?? "";
        const folder = execs.filter((script) =>
          script.startsWith("sh -c mkdir -p /workspace/.oma-checkpoint-"),
        );
        return {
          zstd: transfer.includes("| zstd"),
          gzip: transfer.includes("| gzip"),
          probes: folder.filter((script) => script.includes("command -v zstd")).length,
          folders: folder.length,
          lone: execs.filter((script) => /^sh -c command -v zstd/.test(script)).length,
        };
      } finally {
        await runtime.destroy();
      }
    };
    const auto = components();
    expect(await laterCheckpoint(auto.provider, "later-zstd", text)).toEqual({
      zstd: true,
      gzip: false,
      probes: 1,
      folders: 1,
      lone: 0,
    });
    const lacking = components({ fetch: withoutZstd });
    expect(await laterCheckpoint(lacking.provider, "later-no-zstd-text", text)).toMatchObject({
      zstd: false,
      gzip: true,
      folders: 1,
      lone: 0,
    });
    expect(await laterCheckpoint(lacking.provider, "later-no-zstd-noise", noise)).toMatchObject({
      zstd: false,
      gzip: false,
      folders: 1,
      lone: 0,
    });
    // Little to send: no compression, and no question asked.
    expect(await laterCheckpoint(auto.provider, "later-small", "printf second > b.txt")).toEqual({
      zstd: false,
      gzip: false,
      probes: 0,
      folders: 1,
      lone: 0,
    });
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

  it("still restores a handle of the earlier manifest format, a blob per content", async () => {
    const session = sessionKeyOf("manifest-v1");
    const sha = (text: string) => createHash("sha256").update(text).digest("hex");
    const contents = {
      "docs/readme.txt": "written before packs",
      "run.sh": "#!/bin/sh\necho hi\n",
      empty: "",
    };
    const entries: unknown[] = [
      { type: "directory", path: "docs", mode: 0o755, mtime: 1_700_000_000 },
    ];
    for (const [path, text] of Object.entries(contents)) {
      await store.put(
        blobKeyOf("cloudflare-bridge-workspaces", session, sha(text)),
        new TextEncoder().encode(text),
      );
      entries.push({
        type: "file",
        path,
        mode: path === "run.sh" ? 0o755 : 0o644,
        mtime: 1_700_000_000,
        size: text.length,
        sha256: sha(text),
      });
    }
    entries.push({
      type: "symlink",
      path: "link",
      mode: 0o777,
      mtime: 1_700_000_000,
      target: "docs/readme.txt",
    });
    entries.sort((left, right) =>
      (left as { path: string }).path < (right as { path: string }).path ? -1 : 1,
    );
    const bytes = new TextEncoder().encode(
      JSON.stringify({ format: "oma-workspace-manifest/1", entries }),
    );
    const manifestSha = createHash("sha256").update(bytes).digest("hex");
    await store.put(manifestKeyOf("cloudflare-bridge-workspaces", session, manifestSha), bytes);
    const { provider } = components();
    const handle = createManifestHandle({
      provider: CLOUDFLARE_BRIDGE_PROVIDER,
      sandboxId: "earlier",
      session,
      sha256: manifestSha,
      size: bytes.byteLength,
    });
    const restored = await provider.restore(handle, {
      sessionId: "manifest-v1",
      workdir: "/workspace",
    });
    try {
      expect(
        await run(
          restored,
          "cat docs/readme.txt link && ./run.sh && wc -c < empty && stat -c '%a' run.sh",
        ),
      ).toBe("written before packswritten before packshi\n0\n755\n");
    } finally {
      await restored.destroy();
    }
  }, 120_000);

  it("still restores a handle of the one-document packed format /2, and the next checkpoint of its session streams /3", async () => {
    const session = sessionKeyOf("manifest-v2");
    const sha = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");
    const small = ["packed one", "packed two, longer"];
    const packBytes = new TextEncoder().encode(small.join(""));
    const pack = { sha256: sha(packBytes), size: packBytes.byteLength };
    await store.put(packKeyOf("cloudflare-bridge-workspaces", session, pack.sha256), packBytes);
    const own = "a blob of its own";
    await store.put(
      blobKeyOf("cloudflare-bridge-workspaces", session, sha(own)),
      new TextEncoder().encode(own),
    );
    const { bytes, sha256: manifestSha } = encodeManifestV2([
      { type: "directory", path: "d", mode: 0o755, mtime: 1_700_000_000 },
      {
        type: "file",
        path: "d/one",
        mode: 0o644,
        mtime: 1_700_000_000,
        size: small[0]?.length ?? 0,
        sha256: sha(small[0] ?? ""),
        location: { pack, offset: 0 },
      },
      {
        type: "file",
        path: "d/two",
        mode: 0o600,
        mtime: 1_700_000_000,
        size: small[1]?.length ?? 0,
        sha256: sha(small[1] ?? ""),
        location: { pack, offset: small[0]?.length ?? 0 },
      },
      {
        type: "file",
        path: "own",
        mode: 0o644,
        mtime: 1_700_000_000,
        size: own.length,
        sha256: sha(own),
      },
      { type: "symlink", path: "link", mode: 0o777, mtime: 1_700_000_000, target: "d/two" },
    ]);
    await store.put(manifestKeyOf("cloudflare-bridge-workspaces", session, manifestSha), bytes);
    const { provider } = components();
    const handle = createManifestHandle({
      provider: CLOUDFLARE_BRIDGE_PROVIDER,
      sandboxId: "earlier",
      session,
      sha256: manifestSha,
      size: bytes.byteLength,
    });
    const context = { sessionId: "manifest-v2", workdir: "/workspace" };
    const restored = await provider.restore(handle, context);
    try {
      expect(await run(restored, "cat d/one link own && stat -c '%a' d/two")).toBe(
        `${small[0]}${small[1]}${own}600\n`,
      );
      puts.length = 0;
      const next = await restored.checkpoint({ kind: "filesystem" });
      // What the /2 manifest named is known stored: nothing is sent again, only the new manifest.
      expect(puts.filter((key) => key.includes("/packs/") || key.includes("/blobs/"))).toEqual([]);
      const stored = await store.get(
        manifestKeyOf(
          "cloudflare-bridge-workspaces",
          session,
          next.checkpointId.slice("sha256:".length),
        ),
      );
      expect((await new Response(stored?.stream()).text()).split("\n")[0]).toBe(
        '{"format":"oma-workspace-manifest/3"}',
      );
    } finally {
      await restored.destroy();
    }
  }, 120_000);

  it("checkpoints hard-linked and duplicate files and restores every path with its bytes", async () => {
    const { provider } = components();
    const context = { sessionId: "hard-links", workdir: "/workspace" };
    const runtime = await provider.create(context);
    try {
      await run(
        runtime,
        "head -c 300000 /dev/urandom > big && ln big big-link && mkdir d && ln big d/third && printf 'same' > s1 && ln s1 s2 && printf 'same' > s3",
      );
      await expectRestoredAlike(provider, runtime, context, [
        DESCRIBE_WORKSPACE,
        "sha256sum big big-link d/third s1 s2 s3",
      ]);
    } finally {
      await runtime.destroy();
    }
  }, 120_000);

  it("hashes only files changed since the last pass in the same sandbox, and never trusts a stale or broken cache", async () => {
    const { provider } = components();
    const context = { sessionId: "hash-cache", workdir: "/workspace" };
    const runtime = await provider.create(context);
    const roundTrip = () =>
      expectRestoredAlike(provider, runtime, context, [
        DESCRIBE_WORKSPACE,
        "sha256sum a.txt c.txt d/e.txt 2>&1; ls",
      ]);
    try {
      await run(
        runtime,
        "printf 'first' > a.txt && printf 'other' > b.txt && mkdir d && printf 'deep' > d/e.txt",
      );
      await roundTrip();
      // The cache is the listing of that pass: its entry records, a stamp and the pass's id; no hash.
      expect(await run(runtime, "ls /tmp/.oma-manifest-cache")).toBe("pass\nrecords\nstamp\n");
      // The pass's own folder went with the cache update.
      expect(await run(runtime, "ls -A /workspace")).toBe("a.txt\nb.txt\nd\n");
      // Same size, and the old mtime put back: only the ctime tells, and it does.
      await run(
        runtime,
        "touch -r a.txt /tmp/ref && printf 'FIRST' > a.txt && touch -r /tmp/ref a.txt && rm b.txt && printf 'new' > c.txt && touch -d 2001-01-01 c.txt",
      );
      await roundTrip();
      // Garbage in the cache's records, or records lost: paths read as changed, and the checkpoint is still right.
      await run(
        runtime,
        "printf 'deeper' > d/e.txt && printf 'not a record list' > /tmp/.oma-manifest-cache/records",
      );
      await roundTrip();
      await run(runtime, "printf 'again' > d/e.txt && : > /tmp/.oma-manifest-cache/records");
      await roundTrip();
      // A stamp that is not there: every file is hashed again.
      await run(runtime, "printf 'once more' > a.txt && rm /tmp/.oma-manifest-cache/stamp");
      await roundTrip();
    } finally {
      await runtime.destroy();
    }
  }, 300_000);

  it("takes a later checkpoint from what changed since the session's previous manifest, and the full listing whenever the delta does not fit", async () => {
    const { provider } = components();
    const context = { sessionId: "listing-delta", workdir: "/workspace" };
    const runtime = await provider.create(context);
    const cache = "/tmp/.oma-manifest-cache";
    const listingGets = () =>
      requests
        .filter(
          (request) =>
            request.startsWith("GET") &&
            /\/\.oma-manifest-[^/]+\/(records|added|removed)$/.test(request),
        )
        .map((request) => request.slice(request.lastIndexOf("/") + 1));
    const step = async (change: string, expected: readonly string[]) => {
      await run(runtime, change);
      requests.length = 0;
      await expectRestoredAlike(provider, runtime, context, [
        DESCRIBE_WORKSPACE,
        "sha256sum $(find . -type f | sort) 2>&1",
      ]);
      expect(listingGets()).toEqual(expected);
    };
    try {
      // The first checkpoint of the session streams the workspace: no listing is fetched at all.
      await step(
        "mkdir -p d/e && printf one > d/a && printf two > d/b && printf three > q.txt && ln -s d/a link && for i in $(seq 1 40); do printf $i > d/e/f$i; done",
        [],
      );
      // Changed, added, removed, a mode, a link target, and new bytes under the old mtime (the ctime tells).
      await step(
        "printf ONE > d/a && printf new > d/c && rm d/b && chmod 700 d/e && ln -sfn d/c link && touch -r q.txt /tmp/ref && printf THREE > q.txt && touch -r /tmp/ref q.txt",
        ["removed", "added"],
      );
      // A cache of another pass than the published manifest's: the full listing.
      await step(
        `printf x > d/e/f1 && printf '%s' ${"0".repeat(8)}-0000-4000-8000-${"0".repeat(12)} > ${cache}/pass`,
        ["records"],
      );
      // Records the cache lost: their paths read as changed, and the manifest is still right.
      await step(`printf y > d/e/f2 && sed -z -i '/^d\\/e\\/f3\\/\\//d' ${cache}/records`, [
        "removed",
        "added",
      ]);
      // A path gone from the workspace and from the cache: the previous manifest would keep it, the count tells.
      await step(`rm q.txt && sed -z -i '/^q\\.txt\\/\\//d' ${cache}/records`, [
        "removed",
        "added",
        "records",
      ]);
      // Garbage in the cache's records: the full listing.
      await step(`printf z > d/e/f4 && printf 'garbage\\0' >> ${cache}/records`, [
        "removed",
        "added",
        "records",
      ]);
      // The previous manifest gone from the store: the full listing.
      await run(runtime, "printf w > d/e/f5");
      for (const key of await blobKeys(
        `cloudflare-bridge-workspaces/sessions/${sessionKeyOf("listing-delta")}/manifests/`,
      ))
        await store.delete(key);
      requests.length = 0;
      await expectRestoredAlike(provider, runtime, context, [
        DESCRIBE_WORKSPACE,
        "sha256sum $(find . -type f | sort) 2>&1",
      ]);
      expect(listingGets()).toEqual(["removed", "added", "records"]);
      // A pass taken again after its delta did not fit leaves its own listing as the cache: the next one is a delta.
      await step("printf v > d/e/f6", ["removed", "added"]);
      expect(await run(runtime, `ls ${cache}`)).toBe("pass\nrecords\nstamp\n");
      expect(await run(runtime, "ls -A /workspace | grep -c '^\\.oma-' || true")).toBe("0\n");
    } finally {
      await runtime.destroy();
    }
  }, 300_000);
});
