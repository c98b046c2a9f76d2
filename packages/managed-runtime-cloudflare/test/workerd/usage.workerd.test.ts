import {
  applyMigrations,
  createD1SqlClient,
  createManagedRuntimeHost,
  createSqlFencePort,
  createSqlOrphanPort,
  resolveManagedRuntimePlan,
} from "@open-managed-agents/managed-runtime-host";
import {
  type ManagedRuntimeProfile,
  type RuntimeResourceScope,
  type UsageRecord,
  type UsageRecorderPort,
  MAX_USAGE_SECONDS_PER_EMIT,
  usageRecordSchema,
} from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import {
  type CloudflareUsageOptions,
  createCloudflareManagedRuntimeDriver,
} from "../../src/index.js";
import { TEST_RUNTIME_ENVIRONMENT, createSandbox, testEnv } from "./fixtures.js";

// The harness sleeps past a second, so the measured span has at least one whole second whatever the load.
const profile: ManagedRuntimeProfile = {
  workspace: { requirement: "durable" },
  outputs: { requirement: "disabled" },
  runtimeCheckpoint: "disabled",
  driver: { type: "ama_worker", process: { command: "sh", args: ["-c", "sleep 1.2"] } },
};

function newScope(): RuntimeResourceScope {
  return {
    workspaceId: "tenant-usage",
    environmentId: "env",
    sessionId: `s-${crypto.randomUUID()}`,
    workId: `w-${crypto.randomUUID()}`,
  };
}

/** One work item through the real host, D1 stores and the Sandbox Durable Object. */
async function runOnce(usage: CloudflareUsageOptions) {
  const client = createD1SqlClient(testEnv.VAULT_DB);
  await applyMigrations(client);
  const driver = createCloudflareManagedRuntimeDriver(testEnv, {
    createSandbox,
    runtimeEnvironment: TEST_RUNTIME_ENVIRONMENT,
    usage,
  });
  const resources = await driver.create({
    environmentId: "env",
    placement: "in_process",
    profile,
    plan: resolveManagedRuntimePlan(profile, driver.descriptor().capabilities),
    providerConfig: {},
  });
  const host = createManagedRuntimeHost({
    ownerId: "usage-test",
    leaseTtlMs: 60_000,
    heartbeatIntervalMs: 20_000,
    cleanupTimeoutMs: 60_000,
    fences: createSqlFencePort({ client }),
    orphans: createSqlOrphanPort({ client }),
    ...resources,
  });
  const scope = newScope();
  return { scope, result: await host.run({ scope, profile }) };
}

describe("sandbox_active_seconds from the Cloudflare driver", () => {
  it("emits one record per container from its start to its stop", async () => {
    const records: UsageRecord[] = [];
    const { scope, result } = await runOnce({
      recorder: { record: async (record) => void records.push(record) },
      instanceType: "standard-1",
    });
    expect(result).toMatchObject({ type: "completed", cleanupErrors: [] });
    expect(records).toHaveLength(1);
    const [record] = records;
    expect(usageRecordSchema.parse(record)).toEqual(record);
    expect(record).toMatchObject({
      kind: "sandbox_active_seconds",
      provider: "cloudflare",
      scope,
      instanceType: "standard-1",
    });
    expect(record?.runtimeId).toMatch(/^oma-/);
    expect(record?.value).toBeGreaterThanOrEqual(1);
    expect(record?.value).toBeLessThanOrEqual(MAX_USAGE_SECONDS_PER_EMIT);
    expect(
      Date.parse(record?.stoppedAt ?? "") - Date.parse(record?.startedAt ?? ""),
    ).toBeGreaterThanOrEqual((record?.value ?? 0) * 1000);
  });

  it("clamps a span longer than 24 hours to 24 hours", async () => {
    const records: UsageRecord[] = [];
    let calls = 0;
    // The first reading is the start; later ones are two days on.
    const now = () => (calls++ === 0 ? Date.now() - 2 * 86_400_000 : Date.now());
    const { result } = await runOnce({
      recorder: { record: async (record) => void records.push(record) },
      now,
    });
    expect(result.type).toBe("completed");
    expect(records.map((record) => record.value)).toEqual([MAX_USAGE_SECONDS_PER_EMIT]);
  });

  it("a failing recorder neither fails nor blocks teardown", async () => {
    const recorder: UsageRecorderPort = {
      record: async () => {
        throw new Error("ledger down");
      },
    };
    const { result } = await runOnce({ recorder });
    expect(result).toMatchObject({ type: "completed", cleanupErrors: [] });
  });

  it("a hanging recorder is waited for at most recordTimeoutMs, and handed to waitUntil", async () => {
    const kept: Promise<unknown>[] = [];
    const recorder: UsageRecorderPort = { record: () => new Promise<void>(() => undefined) };
    const { result } = await runOnce({
      recorder,
      recordTimeoutMs: 100,
      waitUntil: (promise) => void kept.push(promise),
    });
    expect(result).toMatchObject({ type: "completed", cleanupErrors: [] });
    expect(kept).toHaveLength(1);
  });
});
