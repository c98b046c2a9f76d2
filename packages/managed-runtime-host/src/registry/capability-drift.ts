import {
  CapabilityDriftError,
  type CredentialEgressCapabilities,
  type ManagedRuntimePlan,
  type ManagedRuntimeResourceCapabilities,
} from "@open-managed-agents/runtime-resource-contract";

/** A stable, order-independent rendering of a list. */
function sorted(values: readonly string[]): string {
  return [...values].sort().join(",");
}

/** Every compared field of the four capability sets, rendered for comparison. */
function capabilityFields(
  capabilities: ManagedRuntimeResourceCapabilities,
): Record<string, string> {
  return {
    "sandbox.suspendResume": capabilities.sandbox.suspendResume,
    "sandbox.hardTerminate": capabilities.sandbox.hardTerminate,
    "sandbox.runtimeCheckpoints": sorted(capabilities.sandbox.runtimeCheckpoints),
    "workspace.strategies": sorted(capabilities.workspace.strategies),
    "outputs.strategies": sorted(
      capabilities.outputs.strategies.map((entry) => `${entry.strategy}/${entry.durability}`),
    ),
    "harness.drivers": sorted(capabilities.harness.drivers),
  };
}

/**
 * Throws {@link CapabilityDriftError} when the live ports disagree with the descriptor: any field of
 * the four capability sets (including harness lanes and output durability), or any field of the plan.
 */
export function assertNoDrift(
  provider: string,
  advertised: {
    readonly capabilities: ManagedRuntimeResourceCapabilities;
    readonly plan: ManagedRuntimePlan;
  },
  live: {
    readonly capabilities: ManagedRuntimeResourceCapabilities;
    readonly plan: ManagedRuntimePlan;
  },
): void {
  const before = capabilityFields(advertised.capabilities);
  const after = capabilityFields(live.capabilities);
  for (const field of Object.keys(before)) {
    if (before[field] !== after[field])
      throw drift(provider, field, before[field] ?? "", after[field] ?? "");
  }
  for (const field of [
    "workspaceStrategy",
    "outputStrategy",
    "runtimeCheckpoint",
    "driver",
  ] as const) {
    const planned = String(advertised.plan[field]);
    const actual = String(live.plan[field]);
    if (planned !== actual) throw drift(provider, `plan.${field}`, planned, actual);
  }
}

/** Throws when a live egress port's capabilities disagree with the descriptor's. */
export function assertEgressMatches(
  provider: string,
  advertised: CredentialEgressCapabilities,
  live: CredentialEgressCapabilities,
): void {
  const fields = {
    enforcement: [advertised.enforcement, live.enforcement],
    credentialMode: [advertised.credentialMode, live.credentialMode],
    interceptedProtocols: [
      sorted(advertised.interceptedProtocols),
      sorted(live.interceptedProtocols),
    ],
  } as const;
  for (const [field, [before, after]] of Object.entries(fields)) {
    if (before !== after) throw drift(provider, `credentialEgress.${field}`, before, after);
  }
}

/** A drift error naming the field and both values. */
export function drift(
  provider: string,
  field: string,
  advertised: string,
  live: string,
): CapabilityDriftError {
  return new CapabilityDriftError({
    message: `provider ${provider} drifted from its advertised capabilities at ${field}: advertised ${advertised || "none"}, live ${live || "none"}`,
    context: { provider, field, advertised, live },
  });
}

/** Throws when the descriptor's `memoryStores` claim and the live memory-stores port disagree (absent on both is agreement). */
export function assertMemoryStoresMatch(
  provider: string,
  advertised: string | undefined,
  live: { readonly mode: string } | undefined,
): void {
  const claimed = advertised ?? "unsupported";
  const actual = live?.mode ?? "unsupported";
  if (claimed !== actual) throw drift(provider, "memoryStores", claimed, actual);
}
