import { describe, expect, it } from "vitest";
import type { ManagedRuntimeProfile } from "@open-managed-agents/runtime-resource-contract";
import { CLEANUP_STAGES, TRANSACTION_STAGES } from "../src/transaction/order.js";
import { tokensOf } from "./support/invariants.js";
import {
  amaProfile,
  callSequence,
  createHostFixture,
  scope,
  serializedOutputs,
} from "./support/fixture.js";

const checkpointProfile: ManagedRuntimeProfile = { ...amaProfile, runtimeCheckpoint: "optional" };
const withCheckpoints = {
  runtimeCheckpoint: true,
  sessionInputs: true,
  sandboxCapabilities: {
    suspendResume: "supported",
    hardTerminate: "supported",
    runtimeCheckpoints: ["process"],
  },
} as const;
const session = {
  id: "ses-1",
  environmentId: "env-1",
  metadata: {},
  resources: [{ type: "file", fileId: "file-1" }],
};

describe("host transaction order", () => {
  it("keeps the order as data in one place", () => {
    expect(TRANSACTION_STAGES).toEqual([
      "session-salvage",
      "workspace-materialize",
      "outputs-prepare",
      "credential-egress-prepare",
      "runtime-checkpoint-restore",
      "sandbox-acquire",
      "workspace-attach",
      "outputs-attach",
      "credential-egress-attach",
      "memory-stores-mount",
      "environment-packages-install",
      "session-inputs-materialize",
      "harness-run",
      "session-inputs-synchronize-final",
      "memory-stores-synchronize-final",
      "sandbox-suspend",
      "workspace-checkpoint",
      "runtime-checkpoint-create",
      "outputs-collect",
      "fence-publish",
    ]);
    expect(CLEANUP_STAGES).toEqual([
      "credential-egress-revoke",
      "sandbox-acquire-settle",
      "sandbox-terminate",
      "sandbox-journal-settle",
      "outputs-release",
      "credential-egress-release",
      "workspace-release",
      "fence-release",
    ]);
  });

  it("calls every port in the normative order on a first run", async () => {
    const fixture = createHostFixture({ runtime: withCheckpoints });
    const result = await fixture.run({ profile: checkpointProfile, session });
    expect(result).toMatchObject({
      type: "completed",
      revision: 1,
      generation: 1,
      cleanupErrors: [],
    });
    expect(callSequence(fixture.journal)).toEqual([
      "sandbox.capabilities",
      "workspace.capabilities",
      "outputs.capabilities",
      "harnessDriver.driverCapabilities",
      "credentialEgress.capabilities",
      "fences.acquire",
      "workspace.materialize",
      "outputs.prepare",
      "credentialEgress.prepare",
      "sandbox.acquire",
      "workspace.attach",
      "outputs.attach",
      "credentialEgress.attach",
      "sessionInputs.materialize",
      "fences.isCurrent",
      "harnessDriver.run",
      "sessionInputs.synchronize",
      "fences.isCurrent",
      "workspace.checkpoint",
      "runtimeCheckpoint.create",
      "outputs.collect",
      "outputs.finalize",
      "fences.publish",
      "credentialEgress.revoke",
      "sandbox.terminate",
      "outputs.release",
      "credentialEgress.release",
      "workspace.release",
      "fences.release",
    ]);
    const publish = fixture.journal.of("fences.publish")[0]?.input as {
      runtimeCheckpoint: { kind: string; workGeneration: number };
    };
    expect(publish.runtimeCheckpoint).toMatchObject({ kind: "process", workGeneration: 1 });
  });

  it("uses `${workId}:${generation}:${stage}` as the idempotency key of every stage that takes one", async () => {
    const fixture = createHostFixture({ runtime: withCheckpoints });
    await fixture.run({ profile: checkpointProfile, session });
    const keys = fixture.journal.calls
      .map((call) => (call.input as { idempotencyKey?: string } | undefined)?.idempotencyKey)
      .filter((key): key is string => key !== undefined);
    expect(keys).toEqual([
      "work-1:1:workspace-materialize",
      "work-1:1:outputs-prepare",
      "work-1:1:credential-egress-prepare",
      "work-1:1:session-inputs-materialize",
      "work-1:1:session-inputs-synchronize-final",
      "work-1:1:workspace-checkpoint",
      "work-1:1:outputs-finalize",
    ]);
  });

  it("restores the prior runtime checkpoint instead of acquiring, and publishes a new one", async () => {
    const fixture = createHostFixture({ runtime: withCheckpoints });
    await fixture.run({ profile: checkpointProfile });
    fixture.journal.clear();
    const result = await fixture.run({
      profile: checkpointProfile,
      scope: { ...scope, workId: "work-2" },
    });
    expect(result).toMatchObject({ type: "completed", revision: 2, generation: 2 });
    const sequence = callSequence(fixture.journal);
    expect(sequence).toContain("runtimeCheckpoint.restore");
    expect(sequence).not.toContain("sandbox.acquire");
    expect(sequence.indexOf("runtimeCheckpoint.restore")).toBeLessThan(
      sequence.indexOf("workspace.attach"),
    );
    expect(fixture.logger.entries.map((entry) => entry.event)).toContain(
      "runtime_checkpoint.restored",
    );
    const restored = [...fixture.deps.sandbox.runtimes.values()].find(
      (runtime) => runtime.origin === "restore",
    );
    expect(restored?.state).toBe("stopped");
  });

  it("falls through to a fresh acquire when the restore fails", async () => {
    const fixture = createHostFixture({ runtime: withCheckpoints });
    await fixture.run({ profile: checkpointProfile });
    fixture.deps.faults.add({ port: "runtimeCheckpoint", method: "restore", kind: "throw" });
    const result = await fixture.run({
      profile: checkpointProfile,
      scope: { ...scope, workId: "work-2" },
    });
    expect(result.type).toBe("completed");
    expect(fixture.journal.of("sandbox.acquire")).toHaveLength(2);
    const warning = fixture.logger.entries.find(
      (entry) => entry.event === "runtime_checkpoint.restore_failed",
    );
    expect(warning?.fields.stage).toBe("runtime-checkpoint-restore");
    const tokens = tokensOf(fixture.journal);
    const serialized = await serializedOutputs(fixture, result);
    for (const token of tokens) expect(serialized).not.toContain(token);
  });

  it("does not reuse a checkpoint whose harness identity changed", async () => {
    const fixture = createHostFixture({ runtime: withCheckpoints });
    await fixture.run({ profile: checkpointProfile });
    const changed: ManagedRuntimeProfile = {
      ...checkpointProfile,
      driver: {
        type: "ama_worker",
        process: { command: "/usr/local/bin/ama-worker", env: { OTHER_KEY: "x" } },
      },
    };
    await fixture.run({ profile: changed, scope: { ...scope, workId: "work-2" } });
    expect(fixture.journal.of("runtimeCheckpoint.restore")).toHaveLength(0);
  });

  it("suspends a retained runtime before the workspace checkpoint, revokes egress, and does not terminate it", async () => {
    const fixture = createHostFixture({ runtime: { workspaceStrategies: ["retained_runtime"] } });
    const profile: ManagedRuntimeProfile = {
      ...amaProfile,
      workspace: { requirement: "continuable" },
    };
    const result = await fixture.run({ profile });
    expect(result.type).toBe("completed");
    const sequence = callSequence(fixture.journal);
    expect(sequence.indexOf("harnessDriver.run")).toBeLessThan(sequence.indexOf("sandbox.suspend"));
    expect(sequence.indexOf("sandbox.suspend")).toBeLessThan(
      sequence.indexOf("workspace.checkpoint"),
    );
    expect(sequence.indexOf("fences.publish")).toBeLessThan(
      sequence.indexOf("credentialEgress.revoke"),
    );
    expect(sequence).not.toContain("sandbox.terminate");
    const runtime = [...fixture.deps.sandbox.runtimes.values()][0];
    expect(runtime?.state).toBe("suspended");
    const checkpointInput = fixture.journal.of("workspace.checkpoint")[0]?.input as {
      sandbox: { metadata?: Record<string, unknown> };
    };
    expect(checkpointInput.sandbox.metadata?.suspended).toBe(true);
  });

  it("terminates a retained runtime when the egress revoke fails, and reports the revoke", async () => {
    const fixture = createHostFixture({ runtime: { workspaceStrategies: ["retained_runtime"] } });
    fixture.deps.faults.add({ port: "credentialEgress", method: "revoke", kind: "throw" });
    const profile: ManagedRuntimeProfile = {
      ...amaProfile,
      workspace: { requirement: "continuable" },
    };
    const result = await fixture.run({ profile });
    expect(result.type).toBe("completed");
    if (result.type !== "completed") return;
    expect(result.cleanupErrors.map((error) => error.context.stage)).toEqual([
      "credential-egress-revoke",
    ]);
    const sequence = callSequence(fixture.journal);
    expect(sequence.indexOf("credentialEgress.revoke")).toBeLessThan(
      sequence.indexOf("sandbox.terminate"),
    );
    expect([...fixture.deps.sandbox.runtimes.values()][0]?.state).toBe("stopped");
  });

  it("returns conflict without touching any other port while another owner holds the fence", async () => {
    const fixture = createHostFixture();
    const held = await fixture.deps.ports.fences.acquire({
      scope: { ...scope, workId: "other-work" },
      ownerId: "owner-b",
      ttlMs: 60_000,
    });
    expect(held.type).toBe("acquired");
    fixture.journal.clear();
    const expiresAt = new Date(fixture.time.now() + 60_000).toISOString();
    const result = await fixture.run();
    expect(result).toEqual({ type: "conflict", expiresAt });
    expect(callSequence(fixture.journal).filter((name) => !name.endsWith("apabilities"))).toEqual([
      "fences.acquire",
    ]);
  });
});
