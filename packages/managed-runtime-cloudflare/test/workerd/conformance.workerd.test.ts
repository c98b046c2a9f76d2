import { defineManagedRuntimeConformanceSuite } from "@open-managed-agents/managed-runtime-conformance/vitest";
import { createManagedRuntimeProviderDriver } from "../../src/index.js";
import { createD1Vault } from "./d1-vault.js";
import { TEST_RUNTIME_ENVIRONMENT, createSandbox, testEnv } from "./fixtures.js";

defineManagedRuntimeConformanceSuite({
  name: "cloudflare (real Sandbox Durable Object over the local container runtime)",
  driver: createManagedRuntimeProviderDriver,
  factoryOptions: {
    env: testEnv,
    createSandbox,
    runtimeEnvironment: TEST_RUNTIME_ENVIRONMENT,
    credentialVault: createD1Vault(testEnv.VAULT_DB),
    controlPlaneBaseUrl: "https://openma.example",
  },
  timeouts: { caseMs: 90_000, heartbeatIntervalMs: 1_000, leaseTtlMs: 30_000 },
});
