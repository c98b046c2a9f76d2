import {
  type EnvironmentPackagesPort,
  type HarnessSupervisorTransportPort,
  InvalidConfigError,
  type ManagedRuntimeProfile,
  type ManagedRuntimeResourceCapabilities,
  type ManagedSandboxLease,
  type ManagedSandboxPort,
  type MemoryStoresPort,
  type RuntimeResourceScope,
  type SandboxHarnessDriverPort,
  type SessionOutputPort,
  type WorkspacePersistencePort,
} from "@open-managed-agents/runtime-resource-contract";
import type { ManagedSandboxRuntime } from "@open-managed-agents/sandbox";
import { createProviderEnvironmentPackagesPort } from "./environment-packages-port.js";
import { createAmaWorkerHarnessDriver } from "./harness-driver.js";
import { createProviderMemoryStoresPort } from "./memory/memory-stores-port.js";
import {
  type ProviderManagedRuntimeOptions,
  type ResolvedProviderManagedRuntimeOptions,
  resolveProviderManagedRuntimeOptions,
} from "./options.js";
import { createProviderOutputsPort } from "./outputs/outputs-port.js";
import { createRuntimeRegistry } from "./runtime-registry.js";
import { createProviderSandboxPort } from "./sandbox-port.js";
import { createDuplexSupervisorTransport } from "./supervisor-transport.js";
import { createProviderWorkspacePort } from "./workspace-port.js";

/** The managed ports built over one provider. */
export interface ProviderManagedRuntime<R extends ManagedSandboxRuntime = ManagedSandboxRuntime> {
  /** Provider id of every lease; equals the descriptor's `provider`. */
  readonly providerName: string;
  readonly sandbox: ManagedSandboxPort;
  readonly workspace: WorkspacePersistencePort;
  readonly outputs: SessionOutputPort;
  /** Runs `ama_worker`; reports no lanes when `drivers` does not list it. */
  readonly harnessDriver: SandboxHarnessDriverPort;
  /** Present exactly when `drivers` lists `openma_supervised`. */
  readonly supervisorTransport?: HarnessSupervisorTransportPort;
  /** Installs `Environment.config.packages` through `exec`; absent when `environmentPackages` is `false`. */
  readonly environmentPackages?: EnvironmentPackagesPort;
  /** Mounts or projects memory stores; present exactly when the `memoryStores` option names a mode. */
  readonly memoryStores?: MemoryStoresPort;
  /** What a descriptor must advertise so that it agrees with these live ports. */
  readonly descriptorCapabilities: ManagedRuntimeResourceCapabilities;
  /**
   * The live runtime behind a lease of this composition (reconnecting when this process does not hold
   * it), for driver-specific ports such as credential egress. Throws `provider_mismatch` for a foreign lease.
   */
  runtime(input: {
    readonly scope: RuntimeResourceScope;
    readonly lease: ManagedSandboxLease;
  }): Promise<R>;
}

/**
 * Composes the managed-runtime ports over a {@link SandboxProviderPort}. Options are validated here,
 * once; a bad option throws `invalid_config` naming the field.
 */
export function createProviderManagedRuntime<R extends ManagedSandboxRuntime>(
  options: ProviderManagedRuntimeOptions<R>,
): ProviderManagedRuntime<R> {
  const resolved = resolveProviderManagedRuntimeOptions(options);
  const readinessCommand = resolved.readiness?.command ?? harnessCommand(resolved.profile);
  if (readinessCommand === null) {
    throw new InvalidConfigError({
      message:
        "invalid provider managed runtime options at readiness.command: required when no profile is given",
      context: { path: "readiness.command" },
    });
  }
  const registry = createRuntimeRegistry({
    providerName: resolved.providerName,
    provider: resolved.provider,
    context: resolved.context,
    ...(resolved.env ? { env: resolved.env } : {}),
  });
  return {
    providerName: resolved.providerName,
    sandbox: createProviderSandboxPort({
      options: resolved,
      registry,
      readinessCommand,
      // oma-ama-worker answers --version with its own and its SDK's version; another harness may not.
      reportHarnessVersion:
        resolved.profile?.driver.type === "ama_worker" &&
        readinessCommand === resolved.profile.driver.process.command,
    }),
    workspace: createProviderWorkspacePort({ options: resolved, registry }),
    outputs: createProviderOutputsPort({ options: resolved, registry }),
    harnessDriver: createAmaWorkerHarnessDriver({ registry, drivers: resolved.drivers }),
    ...(resolved.drivers.includes("openma_supervised")
      ? { supervisorTransport: createDuplexSupervisorTransport({ registry }) }
      : {}),
    ...(resolved.environmentPackages === false
      ? {}
      : {
          environmentPackages: createProviderEnvironmentPackagesPort({
            registry,
            installer: resolved.environmentPackages ?? {},
          }),
        }),
    ...(resolved.memoryStores
      ? { memoryStores: createProviderMemoryStoresPort({ registry, mode: resolved.memoryStores }) }
      : {}),
    descriptorCapabilities: describeCapabilities(resolved),
    runtime: ({ scope, lease }) => registry.resolve(scope, registry.ownLease(lease)),
  };
}

/**
 * The capabilities a composition with these options offers, without building it. Validates the options
 * like {@link createProviderManagedRuntime}.
 */
export function describeProviderManagedRuntime<R extends ManagedSandboxRuntime>(
  options: ProviderManagedRuntimeOptions<R>,
): ManagedRuntimeResourceCapabilities {
  return describeCapabilities(resolveProviderManagedRuntimeOptions(options));
}

function describeCapabilities<R extends ManagedSandboxRuntime>(
  options: ResolvedProviderManagedRuntimeOptions<R>,
): ManagedRuntimeResourceCapabilities {
  return {
    sandbox: options.sandboxCapabilities,
    workspace: { strategies: options.workspace.strategies },
    outputs: {
      strategies: options.outputs
        ? [{ strategy: "final_collect", durability: options.outputs.durability }]
        : [],
    },
    harness: { drivers: options.drivers },
  };
}

/** The executable a profile's harness runs: the AMA worker process or the supervisor. */
function harnessCommand(profile: ManagedRuntimeProfile | undefined): string | null {
  if (!profile) return null;
  return profile.driver.type === "ama_worker"
    ? profile.driver.process.command
    : profile.driver.supervisor.command;
}
