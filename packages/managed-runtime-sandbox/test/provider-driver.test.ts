import {
  type CredentialEgressPort,
  ManagedRuntimeError,
} from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { NO_CREDENTIAL_EGRESS, createProviderManagedRuntimeDriver } from "../src/index.js";
import {
  amaProfile,
  checkpointPlan,
  fenceFor,
  localWorld,
  scopeFor,
  signal,
} from "./fixtures/world.js";

const scope = scopeFor();
const createInput = (placement: "in_process" | "driver_service" = "in_process") => ({
  environmentId: scope.environmentId,
  placement,
  profile: amaProfile("sh"),
  plan: checkpointPlan,
  providerConfig: {},
});

function driverFor(extra: Partial<Parameters<typeof createProviderManagedRuntimeDriver>[0]> = {}) {
  // No readiness command: the driver probes the profile's harness command of each create input.
  const { readiness: _readiness, ...composition } = localWorld().options;
  return createProviderManagedRuntimeDriver({
    specificationVersion: "v1",
    version: "1.0.0",
    placements: ["in_process"],
    composition,
    ...extra,
  });
}

describe("createProviderManagedRuntimeDriver", () => {
  it("advertises exactly what the live ports report, under the lease's provider id", async () => {
    const driver = driverFor();
    const descriptor = driver.descriptor();
    const resources = await driver.create(createInput());
    expect(descriptor).toMatchObject({
      provider: "local-subprocess",
      version: "1.0.0",
      placements: ["in_process"],
      credentialEgress: NO_CREDENTIAL_EGRESS,
    });
    expect(descriptor.capabilities).toEqual({
      sandbox: await resources.sandbox.capabilities(scope),
      workspace: await resources.workspace.capabilities(scope),
      outputs: await resources.outputs.capabilities(scope),
      harness: { drivers: ["ama_worker", "openma_supervised"] },
    });
    expect(await resources.harnessDriver.driverCapabilities(scope)).toEqual({
      drivers: ["ama_worker"],
    });
    expect(resources.supervisorTransport).toBeDefined();

    const fence = fenceFor(scope);
    const workspace = await resources.workspace.materialize({
      scope,
      fence,
      strategy: "checkpoint_restore",
      activeCheckpoint: null,
      idempotencyKey: "m",
      signal: signal(),
    });
    const lease = await resources.sandbox.acquire({
      scope,
      fence,
      plan: checkpointPlan,
      workspace,
      outputs: null,
      credentialEgress: null,
      signal: signal(),
    });
    expect(lease.provider).toBe(descriptor.provider);
    await resources.sandbox.terminate({ scope, fence, lease, reason: "completed" });
  });

  it("refuses placements it does not list", async () => {
    const error = await driverFor()
      .create(createInput("driver_service"))
      .catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(error, "capability_unsupported")).toBe(true);
  });

  it("requires an egress port when it advertises egress enforcement", async () => {
    const enforced = {
      enforcement: "enforced",
      credentialMode: "live",
      interceptedProtocols: ["https"],
    } as const;
    const missing = await driverFor({ credentialEgress: enforced })
      .create(createInput())
      .catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(missing, "capability_drift")).toBe(true);
    const port = { capabilities: async () => enforced } as unknown as CredentialEgressPort;
    const resources = await driverFor({
      credentialEgress: enforced,
      resources: () => ({ credentialEgress: port }),
    }).create(createInput());
    expect(resources.credentialEgress).toBe(port);
  });

  it("validates the descriptor at factory time", () => {
    for (const extra of [{ version: "" }, { placements: [] }]) {
      let caught: unknown;
      try {
        driverFor(extra);
      } catch (error) {
        caught = error;
      }
      expect(ManagedRuntimeError.hasCode(caught, "invalid_config")).toBe(true);
    }
  });
});
