import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { loadManagedRuntimeProviderDriver } from "../src/loader/load-driver.js";
import { createFakeProviderDriver } from "../src/testing/fake-runtime.js";

const load = (module: unknown, provider = "fake") =>
  loadManagedRuntimeProviderDriver({
    provider,
    moduleSpecifier: "@example/driver",
    factoryOptions: { apiKey: "k" },
    importModule: async () => module,
  });

describe("loadManagedRuntimeProviderDriver", () => {
  it("loads a driver from a sync or async factory and passes factory options through", async () => {
    let received: unknown;
    const driver = await load({
      createManagedRuntimeProviderDriver: (options: unknown) => (
        (received = options), createFakeProviderDriver({})
      ),
    });
    expect(driver.descriptor().provider).toBe("fake");
    expect(received).toEqual({ apiKey: "k" });
    const asyncDriver = await load({
      createManagedRuntimeProviderDriver: async () => createFakeProviderDriver({}),
    });
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
            specificationVersion: "v1", provider: options.provider, version: "0.0.1", placements: ["driver_service"],
            capabilities: { sandbox: { suspendResume: "unsupported", hardTerminate: "supported", runtimeCheckpoints: [] },
              workspace: { strategies: ["checkpoint_restore"] }, outputs: { strategies: [] }, harness: { drivers: ["ama_worker"] } },
            credentialEgress: { enforcement: "unsupported", credentialMode: "snapshot", interceptedProtocols: [] },
          }),
          create: async () => { throw new Error("not in this test"); },
        };
      }`,
    );
    const driver = await loadManagedRuntimeProviderDriver({
      provider: "disk",
      moduleSpecifier: pathToFileURL(file).href,
      factoryOptions: { provider: "disk" },
    });
    expect(driver.descriptor().placements).toEqual(["driver_service"]);
  });

  it("fails with driver_load_failed and an install hint when the module cannot be imported", async () => {
    const error = await loadManagedRuntimeProviderDriver({
      provider: "fake",
      moduleSpecifier: "@example/not-installed-driver",
      factoryOptions: {},
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      code: "driver_load_failed",
      message: expect.stringContaining(
        "install @example/not-installed-driver or pass importModule",
      ),
      context: { provider: "fake", moduleSpecifier: "@example/not-installed-driver" },
    });
  });

  it.each([
    [
      "a module without the factory export",
      { other: () => undefined },
      "does not export createManagedRuntimeProviderDriver",
    ],
    [
      "a factory that throws",
      {
        createManagedRuntimeProviderDriver: () => {
          throw new Error("bad options");
        },
      },
      "threw: bad options",
    ],
    [
      "a factory that returns no driver",
      { createManagedRuntimeProviderDriver: () => ({ descriptor: () => ({}) }) },
      "descriptor() and create()",
    ],
    [
      "an invalid descriptor",
      {
        createManagedRuntimeProviderDriver: () => ({
          descriptor: () => ({ specificationVersion: "v1", provider: "fake" }),
          create: async () => ({}),
        }),
      },
      "invalid driver descriptor",
    ],
  ])("fails with driver_load_failed for %s", async (_name, module, message) => {
    await expect(load(module)).rejects.toMatchObject({
      code: "driver_load_failed",
      message: expect.stringContaining(message),
    });
  });

  it("fails with provider_mismatch when the descriptor names another provider", async () => {
    await expect(
      load({
        createManagedRuntimeProviderDriver: () => createFakeProviderDriver({ provider: "other" }),
      }),
    ).rejects.toMatchObject({
      code: "provider_mismatch",
      context: { expected: "fake", actual: "other" },
    });
  });

  it.each([
    ["an empty provider", { provider: "", moduleSpecifier: "@example/driver" }, "provider"],
    [
      "a whitespace-only provider",
      { provider: " \t ", moduleSpecifier: "@example/driver" },
      "provider",
    ],
    ["an empty module specifier", { provider: "fake", moduleSpecifier: "" }, "moduleSpecifier"],
    [
      "a whitespace-only module specifier",
      { provider: "fake", moduleSpecifier: "   " },
      "moduleSpecifier",
    ],
  ])("refuses %s with invalid_config before importing anything", async (_name, fields, path) => {
    let imported = 0;
    const importModule = async () => {
      imported += 1;
      return { createManagedRuntimeProviderDriver: () => createFakeProviderDriver({}) };
    };
    await expect(
      loadManagedRuntimeProviderDriver({ ...fields, factoryOptions: {}, importModule }),
    ).rejects.toMatchObject({ code: "invalid_config", context: { path } });
    expect(imported).toBe(0);
  });

  it("says the factory threw, with its message and cause, instead of suggesting installation", async () => {
    const thrown = new Error("apiKey is required");
    const error = await load({
      createManagedRuntimeProviderDriver: () => {
        throw thrown;
      },
    }).then(
      () => {
        throw new Error("expected the load to fail");
      },
      (caught: unknown) =>
        caught as { message: string; context: Record<string, unknown>; cause: unknown },
    );
    expect(error).toMatchObject({
      code: "driver_load_failed",
      message: expect.stringContaining(
        "createManagedRuntimeProviderDriver of @example/driver threw: apiKey is required",
      ),
    });
    expect(error.message).not.toContain("install");
    expect(JSON.stringify(error.context)).not.toContain("install");
    expect(error.cause).toBe(thrown);
  });

  it("keeps credentials from the factory options out of the message when the factory echoes them", async () => {
    const secret = "sk-live-factory-option-secret";
    const error = await loadManagedRuntimeProviderDriver({
      provider: "fake",
      moduleSpecifier: "@example/driver",
      factoryOptions: { auth: { apiKey: secret } },
      importModule: async () => ({
        createManagedRuntimeProviderDriver: (options: { auth: { apiKey: string } }) => {
          throw new Error(`key ${options.auth.apiKey} was refused`);
        },
      }),
    }).then(
      () => {
        throw new Error("expected the load to fail");
      },
      (caught: unknown) => caught as Error,
    );
    expect(error.message).toContain("threw: key [redacted] was refused");
    expect(error.message).not.toContain(secret);
  });

  it("validates its options with invalid_config naming the field", async () => {
    await expect(
      loadManagedRuntimeProviderDriver({ provider: "", moduleSpecifier: "x", factoryOptions: {} }),
    ).rejects.toMatchObject({
      code: "invalid_config",
      context: { path: "provider" },
    });
    await expect(
      loadManagedRuntimeProviderDriver({ provider: "x", moduleSpecifier: "", factoryOptions: {} }),
    ).rejects.toMatchObject({
      code: "invalid_config",
      context: { path: "moduleSpecifier" },
    });
  });
});
