import { describe, expect, it } from "vitest";
import type { ManagedRuntimeProviderCreateInput } from "@open-managed-agents/runtime-resource-contract";
import { createManagedRuntimeOrphanReconciler } from "../src/orphan-reconciler.js";
import { createDriverReaper } from "../src/reconciler/driver-reaper.js";
import { createMemoryOrphanPort } from "../src/stores/memory-orphan-port.js";
import { createFakeProviderDriver } from "../src/testing/fake-runtime.js";
import { createManualTime } from "../src/time.js";

const scope = {
  workspaceId: "ws-1",
  environmentId: "env-1",
  sessionId: "session-1",
  workId: "work-1",
};

describe("createDriverReaper", () => {
  it("gives the orphan reconciler a driver's reap and inspect without a profile, creating the ports once", async () => {
    const driver = createFakeProviderDriver({ placements: ["driver_service", "in_process"] });
    const inputs: ManagedRuntimeProviderCreateInput[] = [];
    const reaper = createDriverReaper({
      driver: {
        descriptor: driver.descriptor,
        create: (input) => (inputs.push(input), driver.create(input)),
      },
    });
    expect(await reaper.inspect({ provider: "fake", runtimeId: "never-started" })).toEqual({
      state: "unknown",
    });
    const [runtime] = driver.created;
    if (!runtime) throw new Error("the reaper created no ports");
    const lease = runtime.sandbox.start("acquire");

    const clock = createManualTime();
    const orphans = createMemoryOrphanPort({ clock });
    await orphans.enqueue({
      scope,
      generation: 1,
      ownerId: "host-a",
      sandbox: lease,
      reason: "failed",
      error: "terminate failed",
    });
    const reconciler = createManagedRuntimeOrphanReconciler({
      orphans,
      sandbox: reaper,
      clock: { now: () => clock.now() + 86_400_000 },
    });
    expect(await reconciler.runOnce({ limit: 10 })).toMatchObject({ reaped: 1, failed: 0 });

    expect(runtime.sandbox.runtimes.get(lease.runtimeId)).toMatchObject({
      state: "stopped",
      reapCalls: 1,
    });
    expect(await orphans.list({ limit: 10 })).toEqual([]);
    expect(driver.created).toHaveLength(1);
    // The descriptor's first placement, no provider config, and a plan the descriptor admits.
    expect(inputs).toMatchObject([
      {
        placement: "driver_service",
        providerConfig: {},
        plan: { driver: "ama_worker", outputStrategy: null },
      },
    ]);
  });

  it("creates the ports again after a failed create", async () => {
    const driver = createFakeProviderDriver();
    let failures = 1;
    const reaper = createDriverReaper({
      driver: {
        descriptor: driver.descriptor,
        create: async (input) => {
          if (failures-- > 0) throw new Error("provider API unreachable");
          return driver.create(input);
        },
      },
    });
    await expect(reaper.inspect({ provider: "fake", runtimeId: "x" })).rejects.toThrow(
      "provider API unreachable",
    );
    expect(await reaper.inspect({ provider: "fake", runtimeId: "x" })).toEqual({
      state: "unknown",
    });
  });

  it("refuses a placement the descriptor does not list with capability_unsupported", async () => {
    const reaper = createDriverReaper({
      driver: createFakeProviderDriver(),
      placement: "provider_native",
    });
    await expect(
      reaper.reap({ scope, lease: { provider: "fake", runtimeId: "x" }, reason: "failed" }),
    ).rejects.toMatchObject({ code: "capability_unsupported" });
  });
});
