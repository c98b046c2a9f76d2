import {
  CapabilityDriftError,
  CapabilityUnsupportedError,
  type CredentialEgressCapabilities,
  type CredentialEgressPort,
  type ManagedRuntimeProviderCreateInput,
  type ManagedRuntimeProviderDriverDescriptor,
  type ManagedRuntimeProviderDriverPort,
  type ManagedRuntimeProviderPlacement,
  type ManagedRuntimeProviderResources,
  type ManagedRuntimeResourceCapabilities,
  type ManagedSandboxPort,
  type ManagedRuntimeSpecificationVersion,
  type SessionInputMaterializerPort,
  type WorkspacePersistencePort,
  managedRuntimeProviderDriverDescriptorSchema,
  parseRecord,
} from "@open-managed-agents/runtime-resource-contract";
import type { ManagedSandboxRuntime } from "@open-managed-agents/sandbox";
import type { ProviderManagedRuntimeOptions } from "./options.js";
import {
  type ProviderManagedRuntime,
  createProviderManagedRuntime,
  describeProviderManagedRuntime,
} from "./provider-runtime.js";

/** Egress capabilities of a driver without a credential egress port. */
export const NO_CREDENTIAL_EGRESS: CredentialEgressCapabilities = {
  enforcement: "unsupported",
  credentialMode: "snapshot",
  interceptedProtocols: [],
};

/** Driver-specific ports built over the composition. */
export interface ProviderManagedRuntimeExtraResources {
  /** Replaces the composition's sandbox port, typically wrapping it (usage recording, mounts). */
  readonly sandbox?: ManagedSandboxPort;
  /** Replaces the composition's workspace port, typically wrapping it with a strategy the composition lacks. */
  readonly workspace?: WorkspacePersistencePort;
  readonly credentialEgress?: CredentialEgressPort;
  readonly sessionInputs?: SessionInputMaterializerPort;
}

/** Options of {@link createProviderManagedRuntimeDriver}. */
export interface ProviderManagedRuntimeDriverOptions<
  R extends ManagedSandboxRuntime = ManagedSandboxRuntime,
> {
  /** The contract revision the driver is written against; the descriptor carries it and the host checks it. */
  readonly specificationVersion: ManagedRuntimeSpecificationVersion;
  /** Driver version (semver). */
  readonly version: string;
  /** Placements the driver implements; `create` refuses any other with `capability_unsupported`. */
  readonly placements: readonly ManagedRuntimeProviderPlacement[];
  /** The composition; its `providerName` is the descriptor's `provider`, and each create input supplies the profile. */
  readonly composition: Omit<ProviderManagedRuntimeOptions<R>, "profile">;
  /** What the driver's egress port enforces. @default {@link NO_CREDENTIAL_EGRESS} */
  readonly credentialEgress?: CredentialEgressCapabilities;
  /** Builds driver-specific ports; required to return `credentialEgress` when its enforcement is not `unsupported`. */
  readonly resources?: (
    runtime: ProviderManagedRuntime<R>,
    input: ManagedRuntimeProviderCreateInput,
  ) => ProviderManagedRuntimeExtraResources;
  /**
   * Adjusts the capabilities derived from the composition, for what the ports `resources` returns add
   * (a workspace strategy of a wrapping workspace port). The registry still checks the result against the
   * live ports, so a claim the ports do not keep is `capability_drift`. @default the derived capabilities
   */
  readonly capabilities?: (
    derived: ManagedRuntimeResourceCapabilities,
  ) => ManagedRuntimeResourceCapabilities;
}

/**
 * Turns the composition into a {@link ManagedRuntimeProviderDriverPort}. The descriptor is derived from
 * the same options the live ports are built from, so what is advertised is what runs. Options are
 * validated here, once; a bad option throws `invalid_config`.
 */
export function createProviderManagedRuntimeDriver<R extends ManagedSandboxRuntime>(
  options: ProviderManagedRuntimeDriverOptions<R>,
): ManagedRuntimeProviderDriverPort {
  const descriptor: ManagedRuntimeProviderDriverDescriptor = parseRecord(
    managedRuntimeProviderDriverDescriptorSchema,
    {
      specificationVersion: options.specificationVersion,
      provider: options.composition.providerName,
      version: options.version,
      placements: options.placements,
      capabilities: (options.capabilities ?? ((derived) => derived))(
        describeProviderManagedRuntime(options.composition),
      ),
      credentialEgress: options.credentialEgress ?? NO_CREDENTIAL_EGRESS,
      ...(options.composition.memoryStores
        ? { memoryStores: options.composition.memoryStores }
        : {}),
    },
    { record: "driver descriptor", code: "invalid_config" },
  );

  return {
    descriptor: () => descriptor,

    async create(input): Promise<ManagedRuntimeProviderResources> {
      if (!descriptor.placements.includes(input.placement)) {
        throw new CapabilityUnsupportedError({
          message: `${descriptor.provider} does not run in placement ${input.placement}`,
          context: { placement: input.placement, placements: [...descriptor.placements] },
        });
      }
      const runtime = createProviderManagedRuntime({
        ...options.composition,
        profile: input.profile,
      });
      const extra = options.resources?.(runtime, input) ?? {};
      if (descriptor.credentialEgress.enforcement !== "unsupported" && !extra.credentialEgress) {
        throw new CapabilityDriftError({
          message: `${descriptor.provider} advertises ${descriptor.credentialEgress.enforcement} credential egress but built no egress port`,
        });
      }
      return {
        sandbox: extra.sandbox ?? runtime.sandbox,
        workspace: extra.workspace ?? runtime.workspace,
        outputs: runtime.outputs,
        harnessDriver: runtime.harnessDriver,
        ...(runtime.supervisorTransport
          ? { supervisorTransport: runtime.supervisorTransport }
          : {}),
        ...(extra.credentialEgress ? { credentialEgress: extra.credentialEgress } : {}),
        ...(extra.sessionInputs ? { sessionInputs: extra.sessionInputs } : {}),
        ...(runtime.environmentPackages
          ? { environmentPackages: runtime.environmentPackages }
          : {}),
        ...(runtime.memoryStores ? { memoryStores: runtime.memoryStores } : {}),
      };
    },
  };
}
