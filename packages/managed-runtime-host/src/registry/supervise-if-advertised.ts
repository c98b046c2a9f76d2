import {
  CapabilityUnsupportedError,
  type ManagedRuntimeProviderDriverDescriptor,
  type ManagedRuntimeProviderResources,
  type RuntimeResourceScope,
  managedRuntimeResourceCapabilitiesSchema,
} from "@open-managed-agents/runtime-resource-contract";
import { composeSandboxHarnessDrivers } from "../supervisor/compose-harness-drivers.js";
import { createSupervisedSandboxHarnessDriver } from "../supervisor/supervised-harness-driver.js";
import { parseLive } from "./parse-live.js";

/**
 * When the descriptor advertises `openma_supervised` and the driver's own harness port cannot run it,
 * wraps the supervisor transport into a supervised harness driver beside the driver's own. Without a
 * transport the advertisement is refused.
 */
export async function superviseIfAdvertised(
  provider: string,
  descriptor: ManagedRuntimeProviderDriverDescriptor,
  resources: ManagedRuntimeProviderResources,
  scope: RuntimeResourceScope,
): Promise<ManagedRuntimeProviderResources> {
  if (!descriptor.capabilities.harness.drivers.includes("openma_supervised")) return resources;
  const harness = managedRuntimeResourceCapabilitiesSchema.shape.harness;
  const lanes = parseLive(
    provider,
    harness,
    await resources.harnessDriver.driverCapabilities(scope),
    "harness",
  ).drivers;
  if (lanes.includes("openma_supervised")) return resources;
  const transport = resources.supervisorTransport;
  if (!transport) {
    throw new CapabilityUnsupportedError({
      message: `provider ${provider} advertises openma_supervised, but its harness driver cannot run it and it has no supervisor transport`,
      context: { requirement: "harness_driver", driver: "openma_supervised", provider },
    });
  }
  return {
    ...resources,
    harnessDriver: composeSandboxHarnessDrivers(
      resources.harnessDriver,
      createSupervisedSandboxHarnessDriver({ transport }),
    ),
  };
}
