import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import {
  type ProviderManagedRuntimeOptions,
  createProviderManagedRuntime,
  describeProviderManagedRuntime,
} from "../src/index.js";
import { amaProfile, baseOptions } from "./fixtures/world.js";
import { createScriptedProvider } from "./fixtures/scripted-provider.js";

function configError(options: unknown): ManagedRuntimeError {
  try {
    createProviderManagedRuntime(options as ProviderManagedRuntimeOptions);
  } catch (error) {
    if (ManagedRuntimeError.hasCode(error, "invalid_config")) return error;
    throw error;
  }
  throw new Error("expected invalid_config");
}

describe("createProviderManagedRuntime options", () => {
  const valid = baseOptions(createScriptedProvider());

  it.each([
    ["providerName", { ...valid, providerName: "" }],
    ["provider.provider", { ...valid, providerName: "other" }],
    ["provider", { ...valid, provider: { provider: "scripted", create: () => undefined } }],
    ["context", { ...valid, context: "not a function" }],
    ["leaseTtlMs", { ...valid, leaseTtlMs: 0 }],
    [
      "sandboxCapabilities.runtimeCheckpoints",
      {
        ...valid,
        sandboxCapabilities: { ...valid.sandboxCapabilities, runtimeCheckpoints: ["filesystem"] },
      },
    ],
    [
      "sandboxCapabilities.suspendResume",
      { ...valid, workspace: { strategies: ["checkpoint_restore", "retained_runtime"] } },
    ],
    ["workspace.strategies", { ...valid, workspace: { strategies: [] } }],
    ["workspace.strategies.0", { ...valid, workspace: { strategies: ["durable_mount"] } }],
    ["drivers", { ...valid, drivers: ["ama_worker", "ama_worker"] }],
    [
      "outputs.keyPrefix",
      { ...valid, outputs: { store: createMemoryBlobStore(), keyPrefix: "a/../b" } },
    ],
    [
      "outputs.maxFiles",
      { ...valid, outputs: { store: createMemoryBlobStore(), keyPrefix: "out", maxFiles: 1.5 } },
    ],
    ["outputs.store", { ...valid, outputs: { store: {}, keyPrefix: "out" } }],
    ["readiness.command", { ...valid, readiness: undefined }],
  ])("rejects a bad %s with invalid_config naming the field", (field, options) => {
    const error = configError(options);
    expect(error.message).toContain(field);
  });

  it("takes the readiness command from the profile when none is configured", () => {
    expect(() =>
      createProviderManagedRuntime({
        ...valid,
        readiness: undefined,
        profile: amaProfile("/opt/worker"),
      }),
    ).not.toThrow();
  });

  it("advertises exactly the configured capabilities, outputs only when a store is configured", () => {
    expect(describeProviderManagedRuntime(valid)).toEqual({
      sandbox: valid.sandboxCapabilities,
      workspace: { strategies: ["checkpoint_restore"] },
      outputs: { strategies: [] },
      harness: { drivers: ["ama_worker", "openma_supervised"] },
    });
    const withOutputs = {
      ...valid,
      outputs: {
        store: createMemoryBlobStore(),
        keyPrefix: "out",
        durability: "best_effort" as const,
      },
    };
    expect(describeProviderManagedRuntime(withOutputs).outputs).toEqual({
      strategies: [{ strategy: "final_collect", durability: "best_effort" }],
    });
  });

  it("exposes the supervisor transport only when openma_supervised is listed", () => {
    expect(createProviderManagedRuntime(valid).supervisorTransport).toBeDefined();
    expect(
      createProviderManagedRuntime({ ...valid, drivers: ["ama_worker"] }).supervisorTransport,
    ).toBeUndefined();
  });
});
