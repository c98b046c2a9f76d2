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
  type SessionInputMaterializerPort,
  managedRuntimeProviderDriverDescriptorSchema,
  parseRecord,
} from "@open-managed-agents/runtime-resource-contract";
import type { ManagedSandboxRuntime } from "@open-managed-agents/sandbox";
import type { ProviderManagedRuntimeOptions } from "./options.js";
import { type ProviderManagedRuntime, createProviderManagedRuntime, describeProviderManagedRuntime } from "./provider-runtime.js";

/** Egress capabilities of a driver without a credential egress port. */
export const NO_CREDENTIAL_EGRESS: CredentialEgressCapabilities = { enforcement: "unsupported", credentialMode: "snapshot", interceptedProtocols: [] };

/** Driver-specific ports built over the composition. */
export interface ProviderManagedRuntimeExtraResources {
  readonly credentialEgress?: CredentialEgressPort;
  readonly sessionInputs?: SessionInputMaterializerPort;
}

/** Options of {@link createProviderManagedRuntimeDriver}. */
export interface ProviderManagedRuntimeDriverOptions<R extends ManagedSandboxRuntime = ManagedSandboxRuntime> {
  /** Driver version (semver). */
  readonly version: string;
  /** Placements the driver implements; `create` refuses any other with `capability_unsupported`. */
  readonly placements: readonly ManagedRuntimeProviderPlacement[];
  /** The composition; its `providerName` is the descriptor's `provider`, and each create input supplies the profile. */
  readonly composition: Omit<ProviderManagedRuntimeOptions<R>, "profile">;
  /** What the driver's egress port enforces. @default {@link NO_CREDENTIAL_EGRESS} */
  readonly credentialEgress?: CredentialEgressCapabilities;
  /** Builds driver-specific ports; required to return `credentialEgress` when its enforcement is not `unsupported`. */
  readonly resources?: (runtime: ProviderManagedRuntime<R>, input: ManagedRuntimeProviderCreateInput) => ProviderManagedRuntimeExtraResources;
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
      provider: options.composition.providerName,
      version: options.version,
      placements: options.placements,
      capabilities: describeProviderManagedRuntime(options.composition),
      credentialEgress: options.credentialEgress ?? NO_CREDENTIAL_EGRESS,
      ...(options.composition.memoryStores ? { memoryStores: options.composition.memoryStores } : {}),
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
      const runtime = createProviderManagedRuntime({ ...options.composition, profile: input.profile });
      const extra = options.resources?.(runtime, input) ?? {};
      if (descriptor.credentialEgress.enforcement !== "unsupported" && !extra.credentialEgress) {
        throw new CapabilityDriftError({
          message: `${descriptor.provider} advertises ${descriptor.credentialEgress.enforcement} credential egress but built no egress port`,
        });
      }
      return {
        sandbox: runtime.sandbox,
        workspace: runtime.workspace,
        outputs: runtime.outputs,
        harnessDriver: runtime.harnessDriver,
        ...(runtime.supervisorTransport ? { supervisorTransport: runtime.supervisorTransport } : {}),
        ...(extra.credentialEgress ? { credentialEgress: extra.credentialEgress } : {}),
        ...(extra.sessionInputs ? { sessionInputs: extra.sessionInputs } : {}),
        ...(runtime.environmentPackages ? { environmentPackages: runtime.environmentPackages } : {}),
        ...(runtime.memoryStores ? { memoryStores: runtime.memoryStores } : {}),
      };
    },
  };
}
