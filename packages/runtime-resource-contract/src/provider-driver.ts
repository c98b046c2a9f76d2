import * as z from "zod";
import { nonEmptyString } from "./json.js";
import {
  type ManagedRuntimeResourceCapabilities,
  managedRuntimeResourceCapabilitiesSchema,
} from "./capabilities.js";
import type { RuntimeCheckpointPort } from "./checkpoint.js";
import type { CredentialEgressCapabilities, CredentialEgressPort } from "./credential-egress.js";
import type { EnvironmentPackagesPort } from "./environment-packages.js";
import type { SandboxHarnessDriverPort } from "./harness.js";
import type { SessionOutputPort } from "./outputs.js";
import type { ManagedRuntimePlan, ManagedRuntimeProfile } from "./profile.js";
import type { ManagedSandboxPort } from "./sandbox.js";
import type { SessionInputMaterializerPort } from "./session-inputs.js";
import {
  MEMORY_STORE_MODES,
  type MemoryStoreMode,
  type MemoryStoresPort,
} from "./memory-stores.js";
import type { HarnessSupervisorTransportPort } from "./supervisor.js";
import type { WorkspacePersistencePort } from "./workspace.js";

/** Where the driver runs relative to the host. */
export type ManagedRuntimeProviderPlacement = "in_process" | "driver_service" | "provider_native";
export const MANAGED_RUNTIME_PROVIDER_PLACEMENTS = [
  "in_process",
  "driver_service",
  "provider_native",
] as const;

/** How an environment worker is installed for a deployment. */
export type EnvironmentWorkerInstallationMode =
  | "runtime_host"
  | "provider_dispatch"
  | "provider_activation"
  | "external_worker";
export const ENVIRONMENT_WORKER_INSTALLATION_MODES = [
  "runtime_host",
  "provider_dispatch",
  "provider_activation",
  "external_worker",
] as const;

/**
 * The revision of this contract. A driver states the revision it implements in its descriptor; a host
 * loads only drivers of the revision it implements. The revision changes only when a change to the
 * ports, records or descriptor breaks a driver or a host written against the previous one (docs/contract.md).
 */
export const MANAGED_RUNTIME_SPECIFICATION_VERSION = "v1";

/** The contract revision a driver implements; a literal, so a driver of another revision does not type-check. */
export type ManagedRuntimeSpecificationVersion = typeof MANAGED_RUNTIME_SPECIFICATION_VERSION;

/** What a driver advertises before it creates anything. The registry checks it against the live ports. */
export interface ManagedRuntimeProviderDriverDescriptor {
  /**
   * The contract revision the driver implements. Required: the loader and the registry refuse a driver
   * whose revision is missing or is not {@link MANAGED_RUNTIME_SPECIFICATION_VERSION}, naming both.
   */
  readonly specificationVersion: ManagedRuntimeSpecificationVersion;
  /** Stable provider id; equals every lease's and handle's `provider`. */
  readonly provider: string;
  /** Driver version (semver). */
  readonly version: string;
  /** Placements the driver implements; `create` rejects any other. */
  readonly placements: readonly ManagedRuntimeProviderPlacement[];
  readonly capabilities: ManagedRuntimeResourceCapabilities;
  readonly credentialEgress: CredentialEgressCapabilities;
  /**
   * How the driver puts memory stores at `/mnt/memory/<storeName>/`, claimed only when its
   * `create` returns a `memoryStores` port of that mode. Absent: runs that carry memory stores are refused.
   */
  readonly memoryStores?: MemoryStoreMode;
}

/** Input of {@link ManagedRuntimeProviderDriverPort.create}. */
export interface ManagedRuntimeProviderCreateInput {
  readonly environmentId: string;
  readonly placement: ManagedRuntimeProviderPlacement;
  readonly profile: ManagedRuntimeProfile;
  /** The plan resolved from the descriptor; the registry re-resolves it from the live ports. */
  readonly plan: ManagedRuntimePlan;
  /** Adapter-owned, non-secret configuration; the host does not interpret it. */
  readonly providerConfig: Readonly<Record<string, unknown>>;
}

/** The ports a driver returns. No SDK objects: only ports. */
export interface ManagedRuntimeProviderResources {
  readonly sandbox: ManagedSandboxPort;
  readonly workspace: WorkspacePersistencePort;
  readonly outputs: SessionOutputPort;
  readonly harnessDriver: SandboxHarnessDriverPort;
  readonly supervisorTransport?: HarnessSupervisorTransportPort;
  readonly runtimeCheckpoint?: RuntimeCheckpointPort;
  readonly credentialEgress?: CredentialEgressPort;
  readonly sessionInputs?: SessionInputMaterializerPort;
  /** Installs `Environment.config.packages` before the harness; absent means environments with packages are refused. */
  readonly environmentPackages?: EnvironmentPackagesPort;
  /** Mounts or projects memory stores; present exactly when the descriptor claims `memoryStores`. */
  readonly memoryStores?: MemoryStoresPort;
}

/** A swappable managed-runtime backend. Packages export `createManagedRuntimeProviderDriver(options)` returning one. */
export interface ManagedRuntimeProviderDriverPort {
  descriptor(): ManagedRuntimeProviderDriverDescriptor;
  /** Creates the ports for one environment. Throws `capability_unsupported` for a placement it does not list. */
  create(input: ManagedRuntimeProviderCreateInput): Promise<ManagedRuntimeProviderResources>;
}

/**
 * The export a driver package provides for loading by module specifier. `TFactoryOptions` is the
 * driver's own options type; a loader that does not know it calls the factory with `unknown` and the
 * factory validates what it gets.
 */
export type CreateManagedRuntimeProviderDriver<TFactoryOptions = unknown> = (
  factoryOptions: TFactoryOptions,
) => ManagedRuntimeProviderDriverPort | Promise<ManagedRuntimeProviderDriverPort>;

/** Schema for {@link ManagedRuntimeProviderDriverDescriptor}. */
export const managedRuntimeProviderDriverDescriptorSchema = z.object({
  specificationVersion: z.literal(MANAGED_RUNTIME_SPECIFICATION_VERSION),
  provider: nonEmptyString,
  version: nonEmptyString,
  placements: z.array(z.enum(MANAGED_RUNTIME_PROVIDER_PLACEMENTS)).min(1),
  capabilities: managedRuntimeResourceCapabilitiesSchema,
  credentialEgress: z.object({
    enforcement: z.enum(["enforced", "advisory", "unsupported"]),
    credentialMode: z.enum(["live", "snapshot"]),
    interceptedProtocols: z.array(z.enum(["http", "https", "tcp"])),
  }),
  memoryStores: z.enum(MEMORY_STORE_MODES).optional(),
});
