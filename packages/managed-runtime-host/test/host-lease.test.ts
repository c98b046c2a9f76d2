import { describe, expect, it } from "vitest";
import type {
  HarnessRunInput,
  ManagedRuntimeProfile,
} from "@open-managed-agents/runtime-resource-contract";
import { amaProfile, callSequence, createHostFixture, scope } from "./support/fixture.js";

describe("host lease loss", () => {
  it("ends as lease_lost when a renewal answers lost, aborting the harness through its signal", async () => {
    const fixture = createHostFixture({ runtime: { harness: { durationMs: 60_000 } } });
    let harnessSignal: AbortSignal | undefined;
    fixture.journal.onCall((call) => {
      if (call.port === "harnessDriver" && call.method === "run")
        harnessSignal = (call.input as HarnessRunInput).signal;
    });
    fixture.deps.faults.add({
      port: "fences",
      method: "renew",
      kind: "throw",
      occurrence: 2,
      error: () => new Error("store unreachable"),
    });
    const result = await fixture.run();
    expect(result.type).toBe("lease_lost");
    if (result.type !== "lease_lost") return;
    expect(result.error.code).toBe("lease_lost");
    expect(result.error.context).toMatchObject({
      trigger: "fence_renew_failed",
      stage: "fence-renew",
    });
    expect(harnessSignal?.aborted).toBe(true);
    const sequence = callSequence(fixture.journal);
    expect(sequence).not.toContain("fences.publish");
    expect(sequence.slice(-6)).toEqual([
      "credentialEgress.revoke",
      "sandbox.terminate",
      "outputs.abort",
      "credentialEgress.release",
      "workspace.release",
      "fences.release",
    ]);
    expect((fixture.journal.of("sandbox.terminate")[0]!.input as { reason: string }).reason).toBe(
      "lease_lost",
    );
  });

  it("ends as lease_lost when a renewal answers lost, and never publishes", async () => {
    const fixture = createHostFixture({ runtime: { harness: { durationMs: 60_000 } } });
    fixture.journal.onCall((call) => {
      // Someone releases the fence behind the host's back; the next renewal answers lost.
      if (call.port === "harnessDriver" && call.method === "run") {
        void fixture.deps.ports.fences.release({
          fence: (call.input as HarnessRunInput).fence,
          reason: "failed",
        });
      }
    });
    const result = await fixture.run();
    expect(result).toMatchObject({
      type: "lease_lost",
      error: {
        context: { trigger: "fence_lost", stage: "fence-renew", inFlight: ["harness-run"] },
      },
    });
    expect(fixture.journal.of("fences.publish")).toHaveLength(0);
  });

  it("ends as lease_lost when the sandbox heartbeat reports lost", async () => {
    const fixture = createHostFixture({ runtime: { harness: { durationMs: 60_000 } } });
    fixture.journal.onCall((call) => {
      if (call.port === "sandbox" && call.method === "acquire") {
        queueMicrotask(() => fixture.deps.sandbox.markLost("fake-rt-1"));
      }
    });
    const result = await fixture.run();
    expect(result).toMatchObject({
      type: "lease_lost",
      error: { context: { trigger: "sandbox_lost", stage: "sandbox-heartbeat" } },
    });
    expect(fixture.journal.of("fences.publish")).toHaveLength(0);
  });

  it("ends as lease_lost when the caller aborts, naming the stage in flight", async () => {
    const fixture = createHostFixture({ runtime: { harness: { durationMs: 60_000 } } });
    const controller = new AbortController();
    fixture.journal.onCall((call) => {
      if (call.port === "harnessDriver" && call.method === "run")
        setImmediate(() => controller.abort());
    });
    const result = await fixture.run({ signal: controller.signal });
    expect(result).toMatchObject({
      type: "lease_lost",
      error: { context: { trigger: "caller_aborted", inFlight: ["harness-run"] } },
    });
    expect([...fixture.deps.sandbox.runtimes.values()][0]?.state).toBe("stopped");
  });

  it("ends as lease_lost when the publish is refused", async () => {
    const fixture = createHostFixture();
    fixture.journal.onCall((call) => {
      // Releasing the fence right before publish makes the compare-and-set refuse it.
      if (call.port === "outputs" && call.method === "finalize") {
        const fence = (
          call.input as { fence: Parameters<typeof fixture.deps.ports.fences.release>[0]["fence"] }
        ).fence;
        void fixture.deps.ports.fences.release({ fence, reason: "failed" });
      }
    });
    const result = await fixture.run();
    expect(result).toMatchObject({
      type: "lease_lost",
      error: { context: { trigger: "publish_refused", stage: "fence-publish" } },
    });
  });

  it("does not publish with a fence its own clock says expired", async () => {
    let skewMs = 0;
    const fixture = createHostFixture({
      host: { clock: { now: () => Date.UTC(2026, 0, 1) + skewMs } },
    });
    fixture.journal.onCall((call) => {
      if (call.port === "outputs" && call.method === "finalize") skewMs = 31_000;
    });
    const result = await fixture.run();
    expect(result).toMatchObject({
      type: "lease_lost",
      error: { context: { trigger: "fence_expired", stage: "fence-publish" } },
    });
    expect(fixture.journal.of("fences.publish")).toHaveLength(0);
  });

  it("calls nothing but the terminate on a sandbox once its fence expired by its own clock", async () => {
    // As when the process was stopped right after acquire: another worker may have reaped the sandbox.
    let skewMs = 0;
    const fixture = createHostFixture({
      host: { clock: { now: () => Date.UTC(2026, 0, 1) + skewMs } },
    });
    fixture.journal.onCall((call) => {
      if (call.port === "sandbox" && call.method === "acquire") skewMs = 31_000;
    });
    const result = await fixture.run();
    expect(result).toMatchObject({
      type: "lease_lost",
      error: { context: { trigger: "fence_expired" } },
    });
    const afterAcquire = callSequence(fixture.journal).slice(
      callSequence(fixture.journal).indexOf("sandbox.acquire") + 1,
    );
    expect(afterAcquire.filter((name) => name.startsWith("sandbox."))).toEqual([
      "sandbox.terminate",
    ]);
    expect(afterAcquire.filter((name) => name.startsWith("harness"))).toEqual([]);
  });
});

describe("live checkpoints", () => {
  it("publishes each live checkpoint under its own generation and the final one under the next", async () => {
    const fixture = createHostFixture({
      runtime: { harness: { checkpoints: ["turn-1", "turn-2"] } },
    });
    const result = await fixture.run();
    expect(result).toMatchObject({ type: "completed", revision: 3, generation: 3 });
    const generations = fixture.journal
      .of("fences.publish")
      .map((call) => (call.input as { fence: { generation: number } }).fence.generation);
    expect(generations).toEqual([1, 2, 3]);
    const checkpointKeys = fixture.journal
      .of("workspace.checkpoint")
      .map((call) => (call.input as { idempotencyKey: string }).idempotencyKey);
    expect(checkpointKeys).toEqual([
      "work-1:1:workspace-checkpoint-turn-1",
      "work-1:2:workspace-checkpoint-turn-2",
      "work-1:3:workspace-checkpoint",
    ]);
    const liveManifest = fixture.journal.of("fences.publish")[0]?.input as {
      runtimeCheckpoint: unknown;
      outputCandidate: unknown;
    };
    expect(liveManifest.runtimeCheckpoint).toBeNull();
    expect(liveManifest.outputCandidate).not.toBeNull();
    expect(fixture.journal.of("fences.release")).toHaveLength(1);
  });

  it.each([
    ["an empty id", { checkpointId: " ", sessionId: "ses-1" }, "checkpoint id is empty"],
    ["another session", { checkpointId: "cp", sessionId: "ses-other" }, "another session"],
  ])("refuses %s without publishing", async (_name, request, reason) => {
    let refusal: unknown;
    const fixture = createHostFixture({
      runtime: {
        harness: {
          script: async (input) => {
            refusal = await input.checkpoint?.(request).then(
              () => null,
              (error: unknown) => error,
            );
            return { type: "completed" };
          },
        },
      },
    });
    const result = await fixture.run();
    expect(result.type).toBe("completed");
    expect(refusal).toMatchObject({ code: "invalid_request" });
    expect((refusal as Error).message).toContain(reason);
    expect(fixture.journal.of("fences.publish")).toHaveLength(1);
  });

  it("refuses a duplicate id and a request after the harness returned", async () => {
    let late: HarnessRunInput["checkpoint"];
    let duplicate: unknown;
    const fixture = createHostFixture({
      runtime: {
        harness: {
          script: async (input) => {
            await input.checkpoint?.({ checkpointId: "cp-1", sessionId: "ses-1" });
            duplicate = await input.checkpoint?.({ checkpointId: "cp-1", sessionId: "ses-1" }).then(
              () => null,
              (error: unknown) => error,
            );
            late = input.checkpoint;
            return { type: "completed" };
          },
        },
      },
    });
    await fixture.run();
    expect((duplicate as Error).message).toContain("already used");
    await expect(late?.({ checkpointId: "cp-2", sessionId: "ses-1" })).rejects.toThrow(
      /harness run has ended/,
    );
    expect(fixture.journal.of("fences.publish")).toHaveLength(2);
  });

  it("rejects the request and loses the lease when its publish is refused", async () => {
    let rejection: unknown;
    const fixture = createHostFixture({
      runtime: {
        harness: {
          script: async (input) => {
            rejection = await input.checkpoint?.({ checkpointId: "cp-1", sessionId: "ses-1" }).then(
              () => null,
              (error: unknown) => error,
            );
            return { type: "completed" };
          },
        },
      },
    });
    fixture.journal.onCall((call) => {
      if (call.port === "outputs" && call.method === "finalize") {
        const fence = (
          call.input as { fence: Parameters<typeof fixture.deps.ports.fences.release>[0]["fence"] }
        ).fence;
        void fixture.deps.ports.fences.release({ fence, reason: "failed" });
      }
    });
    const result = await fixture.run();
    expect(rejection).toMatchObject({ code: "lease_lost" });
    expect(result).toMatchObject({
      type: "lease_lost",
      error: { context: { trigger: "publish_refused", stage: "fence-publish-cp-1" } },
    });
  });
});

describe("admission", () => {
  const refusals: [
    string,
    Parameters<typeof createHostFixture>[0],
    Partial<{ profile: ManagedRuntimeProfile; session: unknown }>,
    string,
  ][] = [
    [
      "required egress without a port",
      { runtime: { credentialEgress: null } },
      {},
      "credential_egress",
    ],
    [
      "required egress with advisory enforcement",
      {
        runtime: {
          credentialEgress: {
            enforcement: "advisory",
            credentialMode: "snapshot",
            interceptedProtocols: ["http"],
          },
        },
      },
      {},
      "credential_egress",
    ],
    [
      "an unsupported workspace",
      { runtime: { workspaceStrategies: ["ephemeral"] } },
      {},
      "workspace",
    ],
    [
      "a planned runtime checkpoint without a port",
      {
        runtime: {
          sandboxCapabilities: {
            suspendResume: "unsupported",
            hardTerminate: "supported",
            runtimeCheckpoints: ["filesystem"],
          },
        },
      },
      { profile: { ...amaProfile, runtimeCheckpoint: "optional" } },
      "runtime_checkpoint",
    ],
    [
      "session files without a materializer",
      {},
      {
        session: {
          id: "ses-1",
          environmentId: "env-1",
          metadata: {},
          resources: [{ type: "file", fileId: "f" }],
        },
      },
      "session_inputs",
    ],
    [
      "a GitHub repository without enforced egress",
      { runtime: { credentialEgress: null, sessionInputs: true } },
      {
        profile: { ...amaProfile, credentialEgress: { requirement: "disabled" } },
        session: {
          id: "ses-1",
          environmentId: "env-1",
          metadata: {},
          resources: [{ type: "github_repository", url: "x" }],
        },
      },
      "credential_egress",
    ],
  ];

  it.each(refusals)(
    "refuses %s before taking the fence",
    async (_name, options, input, requirement) => {
      const fixture = createHostFixture(options);
      const result = await fixture.run(input as never);
      expect(result).toMatchObject({
        type: "failed",
        error: { code: "capability_unsupported", context: { requirement } },
        cleanupErrors: [],
      });
      expect(fixture.journal.of("fences.acquire")).toHaveLength(0);
    },
  );

  it("rejects malformed input with invalid_request", async () => {
    const fixture = createHostFixture();
    await expect(
      fixture.host.run({ scope: { ...scope, workId: "" }, profile: amaProfile }),
    ).rejects.toMatchObject({ code: "invalid_request" });
    await expect(
      fixture.host.run({
        scope,
        profile: amaProfile,
        session: { id: "ses-2", environmentId: "env-1", metadata: {}, resources: [] },
      }),
    ).rejects.toMatchObject({ code: "invalid_request", context: { path: "session.id" } });
  });

  it("validates options once, naming the field", () => {
    expect(() => createHostFixture({ host: { heartbeatIntervalMs: 30_000 } })).toThrowError(
      /heartbeatIntervalMs/,
    );
    expect(() => createHostFixture({ host: { ownerId: "" } })).toThrowError(
      expect.objectContaining({ code: "invalid_config" }),
    );
    expect(() => createHostFixture({ host: { sandbox: {} as never } })).toThrowError(/sandbox/);
  });
});
