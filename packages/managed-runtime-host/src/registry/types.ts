import type {
  ManagedRuntimePlan,
  ManagedRuntimeProfile,
  ManagedRuntimeProviderDriverDescriptor,
  ManagedRuntimeProviderDriverPort,
  ManagedRuntimeProviderPlacement,
  ManagedRuntimeProviderResources,
  RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";

/** Options of {@link createManagedRuntimeProviderRegistry}. */
export interface ManagedRuntimeProviderRegistryOptions {
  /** Drivers by their descriptor's `provider`; ids must be unique. */
  readonly drivers: readonly ManagedRuntimeProviderDriverPort[];
}

/** Input of {@link ManagedRuntimeProviderRegistry.prepare}. */
export interface ManagedRuntimeProviderPrepareInput {
  readonly provider: string;
  readonly placement: ManagedRuntimeProviderPlacement;
  readonly scope: RuntimeResourceScope;
  readonly profile: ManagedRuntimeProfile;
  /** Adapter-owned, non-secret configuration, forwarded to `create` untouched. */
  readonly providerConfig: Readonly<Record<string, unknown>>;
}

/** An admitted driver: its descriptor, the plan both advertisement and live ports agree on, and the ports. */
export interface PreparedManagedRuntimeProvider {
  readonly descriptor: ManagedRuntimeProviderDriverDescriptor;
  readonly plan: ManagedRuntimePlan;
  /** The driver's ports; `harnessDriver` is wrapped with the supervised driver when the registry added that lane. */
  readonly resources: ManagedRuntimeProviderResources;
}

/** Admits profiles against registered drivers before any provider allocation. */
export interface ManagedRuntimeProviderRegistry {
  /** The validated descriptors, in registration order. */
  descriptors(): readonly ManagedRuntimeProviderDriverDescriptor[];
  /**
   * Admits `profile` against the named driver, in this order: known provider, placement, advertised plan,
   * required egress enforcement, `create`, supervised-lane wrapping or refusal, live re-resolution
   * (drift refused), runtime-checkpoint port, live egress enforcement.
   */
  prepare(input: ManagedRuntimeProviderPrepareInput): Promise<PreparedManagedRuntimeProvider>;
}
