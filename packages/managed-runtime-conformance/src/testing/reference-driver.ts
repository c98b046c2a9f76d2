import { createReferenceMemoryStoresPort } from "./reference-memory-stores-port.js";
import {
  CapabilityUnsupportedError,
  type ManagedRuntimeProviderDriverDescriptor,
  type ManagedRuntimeProviderDriverPort,
  type ManagedRuntimeProviderResources,
} from "@open-managed-agents/runtime-resource-contract";
import {
  SIMULATED_EGRESS_CAPABILITIES,
  type SimulatedEgressState,
  createSimulatedEgressPort,
} from "./reference-egress-port.js";
import {
  createReferenceHarnessDriver,
  createReferenceSupervisorTransport,
} from "./reference-harness.js";
import { type ReferenceDriverOptions, resolveReferenceDriverOptions } from "./reference-options.js";
import { createReferenceOutputsPort } from "./reference-outputs-port.js";
import { createReferenceRuntimeCheckpointPort } from "./reference-runtime-checkpoint.js";
import { createReferenceSandboxPort } from "./reference-sandbox-port.js";
import { createReferenceWorkspacePort } from "./reference-workspace-port.js";
import { createReferenceWorld } from "./reference-world.js";

/** The reference driver plus what it recorded, for tests that look behind the ports. */
export interface ReferenceManagedRuntimeDriver extends ManagedRuntimeProviderDriverPort {
  /** State of every egress binding the simulated egress port saw (empty unless `simulateEnforcedEgress`). */
  readonly egressBindings: ReadonlyMap<string, SimulatedEgressState>;
  /** Stored output blobs and manifests by key. */
  readonly storedBlobs: ReadonlyMap<string, Uint8Array>;
}

/**
 * Creates the reference managed-runtime driver: small in-memory ports over local-subprocess runtimes
 * (real `sh` processes that see `/workspace` and `/mnt/session/outputs`). It has NO isolation boundary and
 * loads only when `NODE_ENV` is `test`. It claims only what it implements and passes the whole suite.
 */
export function createReferenceManagedRuntimeDriver(
  options: ReferenceDriverOptions = {},
): ReferenceManagedRuntimeDriver {
  const settings = resolveReferenceDriverOptions(options);
  const world = createReferenceWorld(settings);
  const egressBindings = new Map<string, SimulatedEgressState>();
  const descriptor: ManagedRuntimeProviderDriverDescriptor = {
    specificationVersion: "v1",
    provider: settings.provider,
    version: "1.0.0",
    placements: [...settings.placements],
    capabilities: {
      sandbox: {
        suspendResume: settings.suspend ? "supported" : "unsupported",
        hardTerminate: "supported",
        runtimeCheckpoints: settings.runtimeCheckpoint ? ["filesystem"] : [],
      },
      workspace: {
        strategies: settings.suspend
          ? ["checkpoint_restore", "retained_runtime"]
          : ["checkpoint_restore"],
      },
      outputs: {
        strategies: settings.outputs ? [{ strategy: "final_collect", durability: "durable" }] : [],
      },
      harness: {
        drivers: settings.supervised ? ["ama_worker", "openma_supervised"] : ["ama_worker"],
      },
    },
    credentialEgress: settings.simulateEnforcedEgress
      ? SIMULATED_EGRESS_CAPABILITIES
      : { enforcement: "unsupported", credentialMode: "snapshot", interceptedProtocols: [] },
    ...(settings.memoryStores ? { memoryStores: "file_sync" as const } : {}),
  };

  return {
    egressBindings,
    storedBlobs: world.blobs,
    descriptor: () => structuredClone(descriptor),
    async create(input): Promise<ManagedRuntimeProviderResources> {
      if (!settings.placements.includes(input.placement)) {
        throw new CapabilityUnsupportedError({
          message: `${settings.provider} runs ${settings.placements.join(", ")}, not ${input.placement}`,
          context: { provider: settings.provider, placement: input.placement },
        });
      }
      const { driver } = input.profile;
      const readinessCommand =
        driver.type === "ama_worker" ? driver.process.command : driver.supervisor.command;
      const { capabilities } = descriptor;
      return {
        sandbox: createReferenceSandboxPort(world, capabilities.sandbox, readinessCommand),
        workspace: createReferenceWorkspacePort(world, capabilities.workspace.strategies),
        outputs: createReferenceOutputsPort(world, capabilities.outputs.strategies),
        harnessDriver: createReferenceHarnessDriver(world, ["ama_worker"]),
        ...(settings.supervised
          ? { supervisorTransport: createReferenceSupervisorTransport(world) }
          : {}),
        ...(settings.runtimeCheckpoint
          ? { runtimeCheckpoint: createReferenceRuntimeCheckpointPort(world, readinessCommand) }
          : {}),
        ...(settings.simulateEnforcedEgress
          ? { credentialEgress: createSimulatedEgressPort(egressBindings) }
          : {}),
        ...(settings.memoryStores ? { memoryStores: createReferenceMemoryStoresPort(world) } : {}),
      };
    },
  };
}

/** Loader entry point: `loadManagedRuntimeProviderDriver` calls it with the deployment's factory options. */
export function createManagedRuntimeProviderDriver(
  factoryOptions: unknown,
): ReferenceManagedRuntimeDriver {
  return createReferenceManagedRuntimeDriver((factoryOptions ?? {}) as ReferenceDriverOptions);
}
