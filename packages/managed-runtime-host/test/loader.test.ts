import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { loadManagedRuntimeProviderDriver } from "../src/loader/load-driver.js";
import { createFakeProviderDriver } from "../src/testing/fake-runtime.js";

const load = (module: unknown, provider = "fake") =>
  loadManagedRuntimeProviderDriver({ provider, moduleSpecifier: "@example/driver", factoryOptions: { apiKey: "k" }, importModule: async () => module });

describe("loadManagedRuntimeProviderDriver", () => {
  it("loads a driver from a sync or async factory and passes factory options through", async () => {
    let received: unknown;
    const driver = await load({ createManagedRuntimeProviderDriver: (options: unknown) => ((received = options), createFakeProviderDriver({})) });
    expect(driver.descriptor().provider).toBe("fake");
    expect(received).toEqual({ apiKey: "k" });
    const asyncDriver = await load({ createManagedRuntimeProviderDriver: async () => createFakeProviderDriver({}) });
    expect(asyncDriver.descriptor().provider).toBe("fake");
  });

  it("imports a real module from disk by specifier", async () => {
    const directory = mkdtempSync(join(tmpdir(), "driver-"));
    const file = join(directory, "driver.mjs");
    writeFileSync(
      file,
      `export function createManagedRuntimeProviderDriver(options) {
        return {
          descriptor: () => ({
            provider: options.provider, version: "0.0.1", placements: ["driver_service"],
            capabilities: { sandbox: { suspendResume: "unsupported", hardTerminate: "supported", runtimeCheckpoints: [] },
              workspace: { strategies: ["checkpoint_restore"] }, outputs: { strategies: [] }, harness: { drivers: ["ama_worker"] } },
            credentialEgress: { enforcement: "unsupported", credentialMode: "snapshot", interceptedProtocols: [] },
          }),
          create: async () => { throw new Error("not in this test"); },
        };
      }`,
    );
    const driver = await loadManagedRuntimeProviderDriver({ provider: "disk", moduleSpecifier: pathToFileURL(file).href, factoryOptions: { provider: "disk" } });
    expect(driver.descriptor().placements).toEqual(["driver_service"]);
  });

  it("fails with driver_load_failed and an install hint when the module cannot be imported", async () => {
    const error = await loadManagedRuntimeProviderDriver({ provider: "fake", moduleSpecifier: "@example/not-installed-driver", factoryOptions: {} }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      code: "driver_load_failed",
      message: expect.stringContaining("install @example/not-installed-driver or pass importModule"),
      context: { provider: "fake", moduleSpecifier: "@example/not-installed-driver" },
    });
  });

  it.each([
    ["a module without the factory export", { other: () => undefined }, "does not export createManagedRuntimeProviderDriver"],
    ["a factory that throws", { createManagedRuntimeProviderDriver: () => { throw new Error("bad options"); } }, "failed"],
    ["a factory that returns no driver", { createManagedRuntimeProviderDriver: () => ({ descriptor: () => ({}) }) }, "descriptor() and create()"],
    ["an invalid descriptor", { createManagedRuntimeProviderDriver: () => ({ descriptor: () => ({ provider: "fake" }), create: async () => ({}) }) }, "invalid driver descriptor"],
  ])("fails with driver_load_failed for %s", async (_name, module, message) => {
    await expect(load(module)).rejects.toMatchObject({ code: "driver_load_failed", message: expect.stringContaining(message) });
  });

  it("fails with provider_mismatch when the descriptor names another provider", async () => {
    await expect(load({ createManagedRuntimeProviderDriver: () => createFakeProviderDriver({ provider: "other" }) })).rejects.toMatchObject({
      code: "provider_mismatch",
      context: { expected: "fake", actual: "other" },
    });
  });

  it("validates its options with invalid_config naming the field", async () => {
    await expect(loadManagedRuntimeProviderDriver({ provider: "", moduleSpecifier: "x", factoryOptions: {} })).rejects.toMatchObject({
      code: "invalid_config",
      context: { path: "provider" },
    });
    await expect(loadManagedRuntimeProviderDriver({ provider: "x", moduleSpecifier: "", factoryOptions: {} })).rejects.toMatchObject({
      code: "invalid_config",
      context: { path: "moduleSpecifier" },
    });
  });
});
