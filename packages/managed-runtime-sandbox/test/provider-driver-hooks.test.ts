import type {
  ManagedSandboxPort,
  WorkspacePersistencePort,
} from "@open-managed-agents/runtime-resource-contract";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { createProviderManagedRuntimeDriver } from "../src/index.js";
import { amaProfile, checkpointPlan, localWorld, scopeFor } from "./fixtures/world.js";

const scope = scopeFor();
const createInput = {
  environmentId: scope.environmentId,
  placement: "in_process" as const,
  profile: amaProfile("sh"),
  plan: checkpointPlan,
  providerConfig: {},
};

function driverFor(extra: Partial<Parameters<typeof createProviderManagedRuntimeDriver>[0]> = {}) {
  const { readiness: _readiness, ...composition } = localWorld().options;
  return createProviderManagedRuntimeDriver({
    specificationVersion: "v1",
    version: "1.0.0",
    placements: ["in_process"],
    composition,
    ...extra,
  });
}

describe("createProviderManagedRuntimeDriver hooks", () => {
  it("puts the sandbox and workspace ports the resources hook returns in place of the composition's", async () => {
    let wrapped: { sandbox: ManagedSandboxPort; workspace: WorkspacePersistencePort } | undefined;
    const driver = driverFor({
      resources: (composition) => {
        // Wrappers that delegate, as the Cloudflare driver's durable mount and usage recording do.
        const sandbox: ManagedSandboxPort = { ...composition.sandbox };
        const workspace: WorkspacePersistencePort = { ...composition.workspace };
        wrapped = { sandbox, workspace };
        return { sandbox, workspace };
      },
    });
    const resources = await driver.create(createInput);
    expect(resources.sandbox).toBe(wrapped?.sandbox);
    expect(resources.workspace).toBe(wrapped?.workspace);
    const plain = await driverFor().create(createInput);
    expect(plain.sandbox).not.toBe(wrapped?.sandbox);
  });

  it("keeps the composition's ports when the hook returns none", async () => {
    const resources = await driverFor({ resources: () => ({}) }).create(createInput);
    expect(await resources.workspace.capabilities(scope)).toEqual({
      strategies: ["checkpoint_restore"],
    });
  });

  it("lets the capabilities hook adjust what the descriptor advertises, and still validates the result", () => {
    const driver = driverFor({
      capabilities: (derived) => ({
        ...derived,
        workspace: { strategies: ["durable_mount", ...derived.workspace.strategies] },
      }),
    });
    expect(driver.descriptor().capabilities.workspace.strategies).toEqual([
      "durable_mount",
      "checkpoint_restore",
    ]);
    expect(driverFor().descriptor().capabilities.workspace.strategies).toEqual([
      "checkpoint_restore",
    ]);
    let caught: unknown;
    try {
      driverFor({
        capabilities: (derived) => ({ ...derived, harness: { drivers: ["shell" as never] } }),
      });
    } catch (error) {
      caught = error;
    }
    expect(ManagedRuntimeError.hasCode(caught, "invalid_config")).toBe(true);
  });

  it("puts the contract revision it is given in the descriptor", () => {
    expect(driverFor().descriptor().specificationVersion).toBe("v1");
  });
});
