import {
  deriveConformanceRow,
  diffConformanceRows,
  getManagedRuntimeProviderConformance,
} from "@open-managed-agents/managed-runtime-conformance";
import { resolveManagedRuntimePlan } from "@open-managed-agents/managed-runtime-host";
import type { ManagedRuntimeProfile } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import {
  CLOUDFLARE_SANDBOX_PORT_FACTS,
  createCloudflareManagedRuntimeDriver,
} from "../../src/index.js";
import { createD1Vault } from "./d1-vault.js";
import { TEST_RUNTIME_ENVIRONMENT, createSandbox, testEnv } from "./fixtures.js";

const profile: ManagedRuntimeProfile = {
  workspace: { requirement: "durable" },
  outputs: { requirement: "durable" },
  runtimeCheckpoint: "disabled",
  driver: { type: "ama_worker", process: { command: "sh" } },
};

describe("the cloudflare catalog row", () => {
  it("is what the descriptor and the live ports derive, in every capability column", async () => {
    const driver = createCloudflareManagedRuntimeDriver(testEnv, {
      createSandbox,
      runtimeEnvironment: TEST_RUNTIME_ENVIRONMENT,
      credentialVault: createD1Vault(testEnv.VAULT_DB),
    });
    const resources = await driver.create({
      environmentId: "env",
      placement: "in_process",
      profile,
      plan: resolveManagedRuntimePlan(profile, driver.descriptor().capabilities),
      providerConfig: {},
    });
    const derived = await deriveConformanceRow({
      descriptor: driver.descriptor(),
      resources,
      sandboxPortFacts: CLOUDFLARE_SANDBOX_PORT_FACTS,
      driverPackage: "@open-managed-agents/managed-runtime-cloudflare",
    });
    const catalog = getManagedRuntimeProviderConformance("cloudflare");
    expect(diffConformanceRows(catalog, derived)).toEqual([]);
    expect(derived).toEqual(catalog);
  });
});
