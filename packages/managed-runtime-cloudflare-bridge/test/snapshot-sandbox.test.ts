import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import { createWorkspaceSnapshots } from "@open-managed-agents/workspace-snapshots";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBridgeSandboxComponents } from "../src/driver.js";
import { resolveBridgeOptions } from "../src/options.js";
import { execCollect } from "../src/runtime/exec.js";
import { createBridgeSnapshotSandbox } from "../src/snapshots/bridge-snapshot-sandbox.js";
import type { BridgeClient } from "../src/wire/bridge-client.js";
import { DESCRIBE_WORKSPACE, mutationScript, prng } from "./random-workspace.js";

// Cloudflare's bridge Worker in local workerd over the local container runtime, whose file writes land
// full-length before they are filled (see vitest.config.ts): the snapshot package's port over the bridge.
let bridge: LocalBridge;
let storeDir: string;
let client: BridgeClient;

beforeAll(async () => {
  bridge = await startLocalBridge();
  storeDir = await mkdtemp(join(tmpdir(), "oma-bridge-snapshots-"));
  ({ client } = createBridgeSandboxComponents(
    resolveBridgeOptions({
      baseUrl: bridge.url,
      apiKey: bridge.apiKey,
      checkpointStore: createFsBlobStore({ rootDir: storeDir }),
    }),
  ));
}, 120_000);
afterAll(async () => {
  await bridge?.stop();
  if (storeDir) await rm(storeDir, { recursive: true, force: true });
});

async function shell(sandboxId: string, script: string): Promise<string> {
  const result = await execCollect(client, sandboxId, {
    command: "sh",
    args: ["-c", script],
    maxOutputBytes: 4 * 1024 * 1024,
  });
  expect(result.stderr).toBe("");
  expect(result.exitCode).toBe(0);
  return result.stdout;
}

/** Describes the workspace without the snapshot scratch folder (the caller's, left in place). */
const describeWorkspace = (sandboxId: string) =>
  shell(sandboxId, `rm -rf /workspace/.oma-snapshots && ${DESCRIBE_WORKSPACE}`);

describe("workspace snapshots through the bridge port", () => {
  it("checkpoints a chain of 4 in one sandbox and restores each into a fresh one, verified there (3 seeds)", async () => {
    const snapshots = createWorkspaceSnapshots({
      store: createFsBlobStore({ rootDir: storeDir }),
      scratchDirectory: "/workspace/.oma-snapshots",
      partBytes: 256 * 1024,
    });
    for (let seed = 1; seed <= 3; seed += 1) {
      const random = prng(seed);
      const sessionId = `bridge-seed-${seed}`;
      const source = await client.create();
      const taken: Array<{ id: string; tree: string }> = [];
      try {
        const sandbox = createBridgeSnapshotSandbox(client, source);
        for (let step = 0; step < 4; step += 1) {
          await shell(source, mutationScript(random, step));
          const tree = await describeWorkspace(source);
          const ref = await snapshots.checkpoint({
            sandbox,
            sessionId,
            source: { sandbox: source },
          });
          // Each later checkpoint builds on the one before, through the sandbox's listing cache.
          expect(ref.parent).toBe(step === 0 ? null : taken[step - 1]?.id);
          taken.push({ id: ref.id, tree });
        }
      } finally {
        await client.destroy(source);
      }
      for (const { id, tree } of taken) {
        const target = await client.create();
        try {
          await snapshots.restore({
            sandbox: createBridgeSnapshotSandbox(client, target),
            sessionId,
            id,
          });
          expect(await describeWorkspace(target)).toBe(tree);
        } finally {
          await client.destroy(target);
        }
      }
    }
  });

  it("names the path when the restored sandbox differs from the snapshot (integrity_failed)", async () => {
    const snapshots = createWorkspaceSnapshots({
      store: createFsBlobStore({ rootDir: storeDir }),
      scratchDirectory: "/workspace/.oma-snapshots",
    });
    const source = await client.create();
    const target = await client.create();
    try {
      await shell(source, "printf 'kept\\n' > /workspace/kept.txt");
      const ref = await snapshots.checkpoint({
        sandbox: createBridgeSnapshotSandbox(client, source),
        sessionId: "bridge-proof",
      });
      await shell(target, "printf 'stray\\n' > /workspace/stray.txt");
      const refused = await snapshots
        .restore({
          sandbox: createBridgeSnapshotSandbox(client, target),
          sessionId: "bridge-proof",
          id: ref.id,
        })
        .catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: "integrity_failed", context: { entry: "stray.txt" } });
    } finally {
      await client.destroy(source);
      await client.destroy(target);
    }
  });
});
