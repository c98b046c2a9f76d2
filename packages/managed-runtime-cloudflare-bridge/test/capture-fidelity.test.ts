import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import type { ManagedSandboxRuntime as SandboxRuntime } from "@open-managed-agents/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBridgeSandboxComponents } from "../src/driver.js";
import { resolveBridgeOptions } from "../src/options.js";

// Cloudflare's bridge Worker in local workerd over the local container runtime: a checkpoint is exactly the
// tree the walk saw, or a typed refusal naming the path, on a session's first (streamed) checkpoint and on
// its later (listed) ones.
let bridge: LocalBridge;
let storeDir: string;
let store: BlobStore;

beforeAll(async () => {
  bridge = await startLocalBridge();
  storeDir = await mkdtemp(join(tmpdir(), "oma-bridge-capture-"));
  store = createFsBlobStore({ rootDir: storeDir });
}, 120_000);
afterAll(async () => {
  await bridge?.stop();
  if (storeDir) await rm(storeDir, { recursive: true, force: true });
});

/** For each request whose body holds `marker`: `run` before it is sent, and `rewrite` of its body. */
interface ExecHook {
  readonly marker: string;
  readonly run?: () => Promise<void>;
  readonly rewrite?: (body: string) => string;
}

function components(hook?: ExecHook) {
  const hooked: typeof fetch = async (input, init) => {
    if (!hook || typeof init?.body !== "string" || !init.body.includes(hook.marker))
      return fetch(input, init);
    await hook.run?.();
    return fetch(input, { ...init, body: hook.rewrite ? hook.rewrite(init.body) : init.body });
  };
  const resolved = resolveBridgeOptions({
    baseUrl: bridge.url,
    apiKey: bridge.apiKey,
    checkpointStore: store,
    fetch: hooked,
  });
  return createBridgeSandboxComponents(resolved);
}

/** Snapshots published in the store: a refused checkpoint adds none. */
const manifests = async () =>
  (await store.list({ prefix: "cloudflare-bridge-workspaces/" })).objects.filter((object) =>
    object.key.includes("/snapshots/"),
  ).length;

async function refusal(
  promise: Promise<unknown>,
): Promise<{ readonly code: string; readonly context: Record<string, unknown> }> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!ManagedRuntimeError.isInstance(error))
    return { code: `not refused: ${String(error)}`, context: {} };
  return { code: error.code, context: (error.context ?? {}) as Record<string, unknown> };
}

/**
 * A session's first checkpoint and a later one (after a checkpoint of a clean tree) of a workspace that
 * `script` prepares: both refused with `code`, naming an entry that `entry` matches, and nothing published.
 */
async function refusedBothWays(
  runtime: SandboxRuntime,
  checkpoint: (sessionId: string) => Promise<unknown>,
  script: string,
  code: string,
  entry: RegExp,
) {
  await runtime.exec("echo ok > kept.txt");
  // A session whose first checkpoint (of the clean tree) is published: its next one takes the listing.
  const later = `capture-${crypto.randomUUID()}`;
  await checkpoint(later);
  const published = await manifests();
  const prepared = await runtime.exec(script);
  expect(prepared.exitCode, prepared.stderr).toBe(0);
  const first = await refusal(checkpoint(`capture-${crypto.randomUUID()}`));
  expect(first.code).toBe(code);
  expect(String(first.context.entry)).toMatch(entry);
  const second = await refusal(checkpoint(later));
  expect(second.code).toBe(code);
  expect(String(second.context.entry)).toMatch(entry);
  expect(await manifests()).toBe(published);
}

/**
 * Folders `d` nested `levels` deep below `root` with `file` in the deepest, made in chunks whose every command
 * line stays under PATH_MAX and renamed into one another (in `/workspace`, so each move is a rename).
 */
function nested(root: string, levels: number, file: string): string {
  const chunk = 1000;
  const chain = (count: number) => Array.from({ length: count }, () => "d").join("/");
  const steps: string[] = [`mkdir -p ${root}`];
  const chunks: number[] = [];
  for (let depth = 0; depth < levels; depth += chunk) chunks.push(Math.min(chunk, levels - depth));
  for (const [index, count] of chunks.entries())
    steps.push(`mkdir -p .nest-${index}/${chain(count)}`);
  steps.push(`echo lost > .nest-${chunks.length - 1}/${chain(chunks.at(-1) as number)}/${file}`);
  // Innermost chunk first: each moves into the deepest folder of the one before it.
  for (let at = chunks.length - 1; at > 0; at -= 1)
    steps.push(`mv .nest-${at}/d .nest-${at - 1}/${chain(chunk)}/d && rmdir .nest-${at}`);
  steps.push(`mv .nest-0/d ${root}/d && rmdir .nest-0`);
  return steps.join(" && ");
}

describe("a checkpoint is the tree the walk saw, or a refusal naming the path", () => {
  it("refuses a path longer than PATH_MAX (2,100 nested folders and a file) on the first and a later checkpoint", async () => {
    const { provider, checkpointer } = components();
    const runtime = await provider.create({ sessionId: "s", workdir: "/workspace" });
    const sandboxId = runtime.runtimeHandle().runtimeId;
    try {
      // 2,101 entries below `deep`: the deepest folders' paths and the file's are over 4,096 bytes.
      const script = nested("deep", 2100, "file.txt");
      await refusedBothWays(
        runtime,
        (sessionId) => checkpointer.checkpoint({ sandboxId, sessionId }),
        script,
        "archive_rejected",
        /^deep\/d\/d\//,
      );
    } finally {
      // The local container server's own removal cannot take a tree deeper than PATH_MAX.
      await runtime.exec("rm -rf /workspace/deep /workspace/.nest-*").catch(() => undefined);
      await runtime.destroy();
    }
  }, 180_000);

  it("refuses a file the sandbox cannot read on the first and a later checkpoint", async () => {
    const { provider, checkpointer } = components();
    const runtime = await provider.create({ sessionId: "s", workdir: "/workspace" });
    const sandboxId = runtime.runtimeHandle().runtimeId;
    try {
      const script = "mkdir -p sub && echo secret > sub/locked.txt && chmod 000 sub/locked.txt";
      await refusedBothWays(
        runtime,
        (sessionId) => checkpointer.checkpoint({ sandboxId, sessionId }),
        script,
        "sandbox_failed",
        /^sub\/locked\.txt$/,
      );
    } finally {
      await runtime.destroy();
    }
  }, 120_000);

  it("refuses a first checkpoint whose file vanished between the listing and the archive", async () => {
    let runtime: SandboxRuntime | undefined;
    // Stands in for the session's own process removing a file while the checkpoint runs: just as the sandbox
    // starts archiving what it listed and hashed, the file goes.
    const { provider, checkpointer } = components({
      marker: ',"bundle",',
      run: async () => void (await runtime?.exec("rm -f /workspace/gone.txt")),
    });
    runtime = await provider.create({ sessionId: "s", workdir: "/workspace" });
    const sandboxId = runtime.runtimeHandle().runtimeId;
    try {
      await runtime.exec("echo kept > kept.txt && echo going > gone.txt");
      const published = await manifests();
      const refused = await refusal(
        checkpointer.checkpoint({ sandboxId, sessionId: `vanish-${crypto.randomUUID()}` }),
      );
      expect(refused.code).toBe("sandbox_failed");
      expect(refused.context.entry).toBe("gone.txt");
      expect(await manifests()).toBe(published);
    } finally {
      await runtime.destroy();
    }
  }, 120_000);

  it("refuses a first checkpoint whose archive holds fewer entries than the listing", async () => {
    // Stands in for an archiver that leaves an entry out and still succeeds (what `--ignore-failed-read` did):
    // the sandbox's tar is told to exclude a listed file, so it exits 0 with one member fewer.
    const { provider, checkpointer } = components({
      marker: ',"bundle",',
      rewrite: (body) =>
        body.replace("--hard-dereference -T", "--exclude=./left-out.txt --hard-dereference -T"),
    });
    const runtime = await provider.create({ sessionId: "s", workdir: "/workspace" });
    try {
      await runtime.exec("echo kept > kept.txt && echo out > left-out.txt");
      const published = await manifests();
      const refused = await refusal(
        checkpointer.checkpoint({
          sandboxId: runtime.runtimeHandle().runtimeId,
          sessionId: `count-${crypto.randomUUID()}`,
        }),
      );
      expect(refused).toEqual({
        code: "sandbox_failed",
        context: { entry: "left-out.txt", reason: "unreadable" },
      });
      expect(await manifests()).toBe(published);
    } finally {
      await runtime.destroy();
    }
  }, 120_000);

  it("refuses a name that is not valid UTF-8 on the first and a later checkpoint", async () => {
    const { provider, checkpointer } = components();
    const runtime = await provider.create({ sessionId: "s", workdir: "/workspace" });
    const sandboxId = runtime.runtimeHandle().runtimeId;
    try {
      const script = "mkdir -p names && echo a > \"names/bad$(printf '\\377')name\"";
      await refusedBothWays(
        runtime,
        (sessionId) => checkpointer.checkpoint({ sandboxId, sessionId }),
        script,
        "archive_rejected",
        /^(\.\/)?names\/bad/,
      );
    } finally {
      await runtime.destroy();
    }
  }, 120_000);

  it("refuses a sparse file on the first and a later checkpoint, before reading it", async () => {
    const { provider, checkpointer } = components();
    const runtime = await provider.create({ sessionId: "s", workdir: "/workspace" });
    const sandboxId = runtime.runtimeHandle().runtimeId;
    try {
      const script = "mkdir -p data && truncate -s 2G data/holes.img";
      await refusedBothWays(
        runtime,
        (sessionId) => checkpointer.checkpoint({ sandboxId, sessionId }),
        script,
        "archive_rejected",
        /^data\/holes\.img$/,
      );
    } finally {
      await runtime.destroy();
    }
  }, 120_000);

  it("drops setuid and setgid bits when a checkpoint is taken, so a restore never sets them", async () => {
    const { provider, checkpointer } = components();
    const sessionId = `modes-${crypto.randomUUID()}`;
    const runtime = await provider.create({ sessionId, workdir: "/workspace" });
    const sandboxId = runtime.runtimeHandle().runtimeId;
    let restored: SandboxRuntime | undefined;
    try {
      await runtime.exec(
        "echo '#!/bin/sh' > tool && chmod 6755 tool && mkdir shared && chmod 3777 shared",
      );
      const handle = await checkpointer.checkpoint({ sandboxId, sessionId });
      restored = await provider.restore(handle, { sessionId, workdir: "/workspace" });
      const modes = await restored.exec("stat -c '%n %a' tool shared");
      expect(modes.stdout.trim().split("\n")).toEqual(["tool 755", "shared 1777"]);
    } finally {
      await restored?.destroy();
      await runtime.destroy();
    }
  }, 120_000);
});
