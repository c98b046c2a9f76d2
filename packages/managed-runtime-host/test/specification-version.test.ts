import {
  MANAGED_RUNTIME_SPECIFICATION_VERSION,
  ManagedRuntimeError,
} from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { loadManagedRuntimeProviderDriver } from "../src/loader/load-driver.js";
import { createManagedRuntimeProviderRegistry } from "../src/registry/provider-registry.js";
import { createFakeProviderDriver } from "../src/testing/fake-runtime.js";

/** A fake driver whose descriptor states `version` as its contract revision, or states none. */
function driverOfRevision(version: unknown) {
  const driver = createFakeProviderDriver({});
  const { specificationVersion: _own, ...rest } = driver.descriptor();
  const descriptor = version === undefined ? rest : { ...rest, specificationVersion: version };
  return {
    ...driver,
    descriptor: () => descriptor as unknown as ReturnType<typeof driver.descriptor>,
  };
}

const load = (driver: unknown) =>
  loadManagedRuntimeProviderDriver({
    provider: "fake",
    moduleSpecifier: "@example/driver",
    factoryOptions: {},
    importModule: async () => ({ createManagedRuntimeProviderDriver: () => driver }),
  });

describe("the host's contract revision", () => {
  it("is v1, and a v1 driver loads and registers", async () => {
    expect(MANAGED_RUNTIME_SPECIFICATION_VERSION).toBe("v1");
    const driver = await load(driverOfRevision("v1"));
    expect(driver.descriptor().specificationVersion).toBe("v1");
    expect(
      createManagedRuntimeProviderRegistry({ drivers: [driverOfRevision("v1")] }).descriptors()[0]
        ?.specificationVersion,
    ).toBe("v1");
  });

  it.each([["v2"], ["v0"], ["1"]])(
    "the loader refuses a driver of revision %s, naming both revisions",
    async (version) => {
      const error = await load(driverOfRevision(version)).catch((caught: unknown) => caught);
      expect(ManagedRuntimeError.hasCode(error, "driver_load_failed")).toBe(true);
      expect(error).toMatchObject({
        message: `@example/driver implements contract specification ${version}; this host implements v1`,
        context: {
          provider: "fake",
          moduleSpecifier: "@example/driver",
          driverSpecificationVersion: version,
          hostSpecificationVersion: "v1",
        },
      });
    },
  );

  it.each([[undefined], [null], [1], [{ major: 1 }]])(
    "the loader refuses a driver whose revision is %j, as missing",
    async (version) => {
      const error = await load(driverOfRevision(version)).catch((caught: unknown) => caught);
      expect(error).toMatchObject({
        code: "driver_load_failed",
        message:
          "@example/driver declares no contract specification version; this host implements v1",
        context: { driverSpecificationVersion: null, hostSpecificationVersion: "v1" },
      });
    },
  );

  it("checks the revision before the rest of the descriptor, so a driver of another revision is told that", async () => {
    const driver = driverOfRevision("v2");
    const changed = {
      ...driver,
      descriptor: () =>
        ({ ...driver.descriptor(), placements: "in_process" }) as unknown as ReturnType<
          typeof driver.descriptor
        >,
    };
    await expect(load(changed)).rejects.toMatchObject({
      code: "driver_load_failed",
      context: { driverSpecificationVersion: "v2" },
    });
  });

  it("caps a long revision string the driver sends", async () => {
    const error = await load(driverOfRevision(`v${"9".repeat(500)}`)).catch(
      (caught: unknown) => caught,
    );
    expect(
      ManagedRuntimeError.isInstance(error)
        ? String(error.context.driverSpecificationVersion).length
        : 0,
    ).toBe(32);
  });

  it("the registry refuses a driver of another or no revision with invalid_config, naming both", () => {
    expect(() =>
      createManagedRuntimeProviderRegistry({
        drivers: [createFakeProviderDriver({ provider: "ok" }), driverOfRevision("v2")],
      }),
    ).toThrowError(
      expect.objectContaining({
        code: "invalid_config",
        message: "drivers.1 implements contract specification v2; this host implements v1",
        context: {
          path: "drivers.1",
          driverSpecificationVersion: "v2",
          hostSpecificationVersion: "v1",
        },
      }),
    );
    expect(() =>
      createManagedRuntimeProviderRegistry({ drivers: [driverOfRevision(undefined)] }),
    ).toThrowError(
      expect.objectContaining({
        code: "invalid_config",
        context: expect.objectContaining({
          driverSpecificationVersion: null,
          hostSpecificationVersion: "v1",
        }),
      }),
    );
  });
});
