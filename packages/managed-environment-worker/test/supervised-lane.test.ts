import { randomUUID } from "node:crypto";
import type { ManagedRuntimeProfile } from "@open-managed-agents/runtime-resource-contract";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { processesContaining } from "./support/processes.js";
import { publicationOf } from "./support/publication.js";
import { type Stack, startStack } from "./support/stack.js";

let stack: Stack;
beforeEach(async () => {
  stack = await startStack();
});
afterEach(() => stack.close());

/** A supervisor speaking openma-harness-supervisor-v1 that writes to /workspace and heartbeats `beats` times. */
function supervisedProfile(marker: string, beats: number): ManagedRuntimeProfile {
  const script = [
    `printf '%s\\n' '{"type":"ready","protocol":"openma-harness-supervisor-v1"}'`,
    "IFS= read -r command",
    "echo supervised-run > /workspace/supervised.txt",
    "i=0",
    `while [ "$i" -lt ${beats} ]; do printf '{"type":"heartbeat","sequence":%d}\\n' "$i"; i=$((i+1)); sleep 0.1; done`,
    `printf '%s\\n' '{"type":"completed","exitCode":0}'`,
  ].join("\n");
  return {
    workspace: { requirement: "durable", preferredStrategies: ["checkpoint_restore"] },
    outputs: { requirement: "disabled" },
    runtimeCheckpoint: "disabled",
    driver: {
      type: "openma_supervised",
      protocol: "openma-harness-supervisor-v1",
      supervisor: {
        command: "sh",
        args: ["-c", script],
        env: { PATH: "/usr/local/bin:/usr/bin:/bin", OMA_TEST_MARKER: marker },
      },
      harness: { id: "test-supervisor", version: "1" },
      readyTimeoutMs: 20_000,
      heartbeatTimeoutMs: 20_000,
      drainTimeoutMs: 20_000,
    },
  };
}

const sessionScope = (sessionId: string) => ({
  workspaceId: "ws_test",
  environmentId: stack.environment.id,
  sessionId,
});

describe("openma_supervised lane", () => {
  it("heartbeats the Work lease itself and stops the item after a completed run", async () => {
    const session = stack.plane.createSession({ environmentId: stack.environment.id });
    stack.plane.queueTurn(session.id, {
      toolCalls: [{ name: "bash", input: { command: "true" } }],
    });
    const marker = randomUUID();
    const worker = await stack.worker({
      profileFor: () => supervisedProfile(marker, 12),
      heartbeatIntervalMs: 200,
    });
    await worker.drain();
    const [report] = stack.reports;
    expect(report?.lane).toBe("openma_supervised");
    expect(report?.outcome.type === "ran" && report.outcome.result.type).toBe("completed");
    const item = stack.plane
      .workItems(stack.environment.id)
      .find((candidate) => candidate.id === report?.workId);
    expect(item?.state).toBe("stopped");
    expect(item?.latest_heartbeat_at).not.toBeNull();
    expect((await publicationOf(stack.fences, sessionScope(session.id)))?.revision).toBe(1);
  });

  it("ends lease_lost on a 412 mid-run: nothing published, the sandbox terminated, the item left to its new holder", async () => {
    const session = stack.plane.createSession({ environmentId: stack.environment.id });
    stack.plane.queueTurn(session.id, {
      toolCalls: [{ name: "bash", input: { command: "true" } }],
    });
    const marker = randomUUID();
    const worker = await stack.worker({
      profileFor: () => supervisedProfile(marker, 600),
      heartbeatIntervalMs: 200,
    });
    const draining = worker.drain();

    // Another holder renews the lease without a precondition, so this worker's next heartbeat is stale.
    const intruder = stack.client.withOptions({ authToken: stack.environment.environmentKey });
    let workId: string | undefined;
    while (!workId) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const item = stack.plane
        .workItems(stack.environment.id)
        .find((candidate) => candidate.latest_heartbeat_at !== null);
      if (item && (await processesContaining(marker)).length > 0) workId = item.id;
    }
    await intruder.beta.environments.work.heartbeat(workId, {
      environment_id: stack.environment.id,
      desired_ttl_seconds: 60,
    });
    await draining;

    const [report] = stack.reports;
    expect(report?.outcome.type === "ran" && report.outcome.result.type).toBe("lease_lost");
    if (report?.outcome.type === "ran" && report.outcome.result.type === "lease_lost") {
      expect(report.outcome.result.error.code).toBe("lease_lost");
    }
    expect(
      stack.logs.some(
        (entry) =>
          entry.event === "work.lease_lost" &&
          entry.fields.trigger === "heartbeat_precondition_failed",
      ),
    ).toBe(true);
    expect(await publicationOf(stack.fences, sessionScope(session.id))).toBeNull();
    // The host terminated the sandbox (not kept as an orphan) because the run ended lease_lost.
    expect(
      stack.logs.some(
        (entry) => entry.event === "sandbox.terminated" && entry.fields.reason === "lease_lost",
      ),
    ).toBe(true);
    expect(await stack.orphans.list({ limit: 10 })).toEqual([]);
    // And the supervisor process is gone: terminate reached the sandbox's processes.
    const deadline = Date.now() + 20_000;
    let left = await processesContaining(marker);
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      left = await processesContaining(marker);
    }
    expect(left).toEqual([]);
    // Not stopped by this worker: the lease belongs to whoever renewed it.
    expect(
      stack.plane.workItems(stack.environment.id).find((candidate) => candidate.id === workId)
        ?.state,
    ).not.toBe("stopped");
  });
});
