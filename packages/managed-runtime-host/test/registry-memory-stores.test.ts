import {
  ManagedRuntimeError,
  type MemoryStoresPort,
} from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { createManagedRuntimeProviderRegistry } from "../src/registry/provider-registry.js";
import {
  type FakeProviderDriverOptions,
  createFakeProviderDriver,
} from "../src/testing/fake-runtime.js";
import { amaProfile, scope } from "./support/fixture.js";

const port = (mode: MemoryStoresPort["mode"]): MemoryStoresPort => ({
  mode,
  mount: async () => undefined,
  synchronize: async () => ({
    created: 0,
    updated: 0,
    deleted: 0,
    readOnlyChanges: 0,
    conflicts: [],
  }),
});

function prepare(options: FakeProviderDriverOptions) {
  const registry = createManagedRuntimeProviderRegistry({
    drivers: [createFakeProviderDriver(options)],
  });
  return registry.prepare({
    provider: "fake",
    placement: "in_process",
    scope,
    profile: amaProfile,
    providerConfig: {},
  });
}

describe("memory stores in the provider registry", () => {
  it("admits a claim that the live port backs, and no claim without a port", async () => {
    const prepared = await prepare({
      descriptor: { memoryStores: "file_sync" },
      resources: { memoryStores: port("file_sync") },
    });
    expect(prepared.resources.memoryStores?.mode).toBe("file_sync");
    expect((await prepare({})).resources.memoryStores).toBeUndefined();
  });

  it("refuses a claim without a port, a port without a claim, and a mode that differs, as capability_drift", async () => {
    const cases: FakeProviderDriverOptions[] = [
      { descriptor: { memoryStores: "mount" } },
      { resources: { memoryStores: port("file_sync") } },
      { descriptor: { memoryStores: "mount" }, resources: { memoryStores: port("file_sync") } },
    ];
    for (const options of cases) {
      const error = await prepare(options).then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(ManagedRuntimeError.hasCode(error, "capability_drift"), String(error)).toBe(true);
      expect((error as ManagedRuntimeError).context).toMatchObject({ field: "memoryStores" });
    }
  });
});
