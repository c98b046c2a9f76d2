import { resolveManagedRuntimePlan } from "@open-managed-agents/managed-runtime-host";
import {
  ManagedRuntimeError,
  type ManagedRuntimeProfile,
  type RuntimeResourceFence,
  type RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { createCloudflareManagedRuntimeDriver, sessionWorkspacePrefix } from "../../src/index.js";
import { TEST_RUNTIME_ENVIRONMENT, createSandbox, testEnv } from "./fixtures.js";

const signal = new AbortController().signal;
const profile: ManagedRuntimeProfile = {
  workspace: { requirement: "durable" },
  outputs: { requirement: "disabled" },
  runtimeCheckpoint: "disabled",
  driver: { type: "ama_worker", process: { command: "sh" } },
};

describe("durable workspace mount", () => {
  const driver = createCloudflareManagedRuntimeDriver(testEnv, {
    createSandbox,
    runtimeEnvironment: TEST_RUNTIME_ENVIRONMENT,
    workspaceDurableMount: true,
  });
  const plan = resolveManagedRuntimePlan(profile, driver.descriptor().capabilities);
  const scope: RuntimeResourceScope = {
    workspaceId: "ws",
    environmentId: "env",
    sessionId: `mount-${crypto.randomUUID()}`,
    workId: "w1",
  };
  const fence: RuntimeResourceFence = {
    ...scope,
    ownerId: "o",
    generation: 3,
    token: "t",
    expiresAt: new Date(Date.now() + 60_000).toISOString(),
  };

  it("is the plan for a durable workspace and mounts the session prefix through the credential proxy", async () => {
    expect(plan.workspaceStrategy).toBe("durable_mount");
    const resources = await driver.create({
      environmentId: "env",
      placement: "in_process",
      profile,
      plan,
      providerConfig: {},
    });
    const binding = await resources.workspace.materialize({
      scope,
      fence,
      strategy: "durable_mount",
      activeCheckpoint: null,
      idempotencyKey: "m",
      signal,
    });
    expect(binding.metadata).toMatchObject({
      "oma.workspace.mountPrefix": sessionWorkspacePrefix(scope.sessionId),
    });
    const lease = await resources.sandbox.acquire({
      scope,
      fence,
      plan,
      workspace: binding,
      outputs: null,
      credentialEgress: null,
      signal,
    });
    // The local container has no s3fs: the real SDK prepares the mount and the mount command fails.
    const mounted = await resources.workspace
      .attach({ scope, fence, binding, sandbox: lease, signal })
      .catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(mounted, "sandbox_failed")).toBe(true);
    expect(String((mounted as Error).message)).not.toContain(testEnv.R2_SECRET_ACCESS_KEY);
    const scan = await createSandbox(testEnv, lease.runtimeId).exec(
      `env; grep -rl -e '${testEnv.R2_SECRET_ACCESS_KEY}' -e '${testEnv.R2_ACCESS_KEY_ID}' /tmp /workspace; echo "grep=$?"`,
      { timeoutMs: 20_000 },
    );
    expect(scan.stdout).toContain("grep=1");
    expect(scan.stdout).not.toContain(testEnv.R2_SECRET_ACCESS_KEY);
    await resources.sandbox.terminate({ scope, fence, lease, reason: "failed" });
  });

  it("checkpoints by flushing and recording a marker, and refuses candidates it cannot trust", async () => {
    const resources = await driver.create({
      environmentId: "env",
      placement: "in_process",
      profile,
      plan,
      providerConfig: {},
    });
    const binding = await resources.workspace.materialize({
      scope,
      fence,
      strategy: "durable_mount",
      activeCheckpoint: null,
      idempotencyKey: "m",
      signal,
    });
    const lease = await resources.sandbox.acquire({
      scope,
      fence,
      plan,
      workspace: binding,
      outputs: null,
      credentialEgress: null,
      signal,
    });
    const candidate = await resources.workspace.checkpoint({
      scope,
      fence,
      binding,
      sandbox: lease,
      idempotencyKey: "c",
      signal,
    });
    await resources.sandbox.terminate({ scope, fence, lease, reason: "completed" });
    expect(candidate).toMatchObject({
      revision: 3,
      contentHash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    const marker = String(candidate.metadata?.["oma.workspace.mountMarker"]);
    expect(await testEnv.WORKSPACE_BUCKET.head(marker)).not.toBeNull();
    expect(marker.startsWith(`sessions/${encodeURIComponent(scope.sessionId)}/checkpoints/`)).toBe(
      true,
    );

    const next = { ...fence, workId: "w2", generation: 4 };
    const again = await resources.workspace.materialize({
      scope,
      fence: next,
      strategy: "durable_mount",
      activeCheckpoint: candidate,
      idempotencyKey: "n",
      signal,
    });
    expect(again.metadata?.["oma.workspace.mountPrefix"]).toBe(
      sessionWorkspacePrefix(scope.sessionId),
    );

    const refused = async (activeCheckpoint: typeof candidate, code: string): Promise<void> => {
      const error = await resources.workspace
        .materialize({
          scope,
          fence: next,
          strategy: "durable_mount",
          activeCheckpoint,
          idempotencyKey: "x",
          signal,
        })
        .catch((caught: unknown) => caught);
      expect(ManagedRuntimeError.hasCode(error, code as "integrity_failed")).toBe(true);
    };
    await refused({ ...candidate, contentHash: `sha256:${"0".repeat(64)}` }, "integrity_failed");
    await refused(
      {
        ...candidate,
        metadata: {
          ...candidate.metadata,
          "oma.workspace.mountPrefix": "/sessions/other/workspace/",
        },
      },
      "invalid_request",
    );
    await testEnv.WORKSPACE_BUCKET.delete(marker);
    await refused(candidate, "integrity_failed");
  });
});
