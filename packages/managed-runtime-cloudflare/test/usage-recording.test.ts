import type {
  ManagedRuntimePlan,
  ManagedSandboxLease,
  ManagedSandboxPort,
  RuntimeResourceFence,
  UsageRecord,
} from "@open-managed-agents/runtime-resource-contract";
import { SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { withUsageRecording } from "../src/usage/usage-recording.js";

// The wrapper's own rules, over a scripted sandbox port; usage.workerd.test.ts runs it on the real SDK.
const scope = { workspaceId: "w", environmentId: "e", sessionId: "s", workId: "k" };
const fence: RuntimeResourceFence = {
  ...scope,
  ownerId: "o",
  generation: 1,
  token: "fence-token-value",
  expiresAt: "2026-11-01T01:00:00.000Z",
};
const plan: ManagedRuntimePlan = {
  workspaceStrategy: "checkpoint_restore",
  outputStrategy: null,
  runtimeCheckpoint: null,
  driver: "ama_worker",
};
const signal = new AbortController().signal;

function scriptedSandbox(terminateFailures: number): ManagedSandboxPort {
  let failures = terminateFailures;
  const unused = async (): Promise<never> => {
    throw new Error("not used here");
  };
  return {
    capabilities: unused,
    acquire: async () => ({ provider: "cloudflare", runtimeId: "oma-1" }),
    heartbeat: unused,
    suspend: unused,
    inspect: unused,
    async terminate() {
      if (failures-- > 0) throw new SandboxFailedError({ message: "destroy failed" });
    },
    reap: async () => undefined,
  };
}

describe("usage recording around the sandbox port", () => {
  it("keeps the start across a failed terminate and emits once, at the reap that stops the container", async () => {
    const records: UsageRecord[] = [];
    let clock = Date.parse("2026-11-01T00:00:00.000Z");
    const sandbox = withUsageRecording(scriptedSandbox(1), {
      recorder: { record: async (record) => void records.push(record) },
      instanceType: "basic",
      recordTimeoutMs: 1_000,
      waitUntil: null,
      now: () => clock,
    });
    const lease: ManagedSandboxLease = await sandbox.acquire({
      scope,
      fence,
      plan,
      workspace: { bindingId: "b", mountPath: "/workspace" },
      outputs: null,
      credentialEgress: null,
      signal,
    });
    clock += 90_500;
    await expect(
      sandbox.terminate({ scope, fence, lease, reason: "completed" }),
    ).rejects.toMatchObject({ code: "sandbox_failed" });
    expect(records).toEqual([]);
    clock += 10_000;
    await sandbox.reap({ scope, lease, reason: "failed" });
    await sandbox.reap({ scope, lease, reason: "failed" });
    expect(records).toEqual([
      {
        kind: "sandbox_active_seconds",
        value: 100,
        provider: "cloudflare",
        runtimeId: "oma-1",
        scope,
        instanceType: "basic",
        startedAt: "2026-11-01T00:00:00.000Z",
        stoppedAt: "2026-11-01T00:01:40.500Z",
      },
    ]);
    expect(JSON.stringify(records)).not.toContain(fence.token);
  });

  it("emits nothing for a container it did not see start", async () => {
    const records: UsageRecord[] = [];
    const sandbox = withUsageRecording(scriptedSandbox(0), {
      recorder: { record: async (record) => void records.push(record) },
      instanceType: null,
      recordTimeoutMs: 1_000,
      waitUntil: null,
      now: Date.now,
    });
    await sandbox.reap({
      scope,
      lease: { provider: "cloudflare", runtimeId: "oma-elsewhere" },
      reason: "failed",
    });
    expect(records).toEqual([]);
  });

  it("a recorder that throws synchronously does not reach terminate", async () => {
    const sandbox = withUsageRecording(scriptedSandbox(0), {
      recorder: {
        record: () => {
          throw new Error("boom");
        },
      },
      instanceType: null,
      recordTimeoutMs: 1_000,
      waitUntil: null,
      now: Date.now,
    });
    const lease = await sandbox.acquire({
      scope,
      fence,
      plan,
      workspace: { bindingId: "b", mountPath: "/workspace" },
      outputs: null,
      credentialEgress: null,
      signal,
    });
    await expect(
      sandbox.terminate({ scope, fence, lease, reason: "completed" }),
    ).resolves.toBeUndefined();
  });
});
