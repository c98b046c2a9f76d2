import {
  CapabilityUnsupportedError,
  type ManagedRuntimePlan,
  type ManagedRuntimeProfile,
  type ManagedRuntimeResourceCapabilities,
  type OutputStrategy,
  type RuntimeCheckpointKind,
  type WorkspaceRequirement,
  type WorkspaceStrategy,
} from "@open-managed-agents/runtime-resource-contract";

/** Workspace strategies each requirement accepts, in default preference order. */
export const ELIGIBLE_WORKSPACE_STRATEGIES: Readonly<Record<WorkspaceRequirement, readonly WorkspaceStrategy[]>> = {
  durable: ["durable_mount", "checkpoint_restore"],
  continuable: ["durable_mount", "checkpoint_restore", "retained_runtime"],
  ephemeral: ["durable_mount", "checkpoint_restore", "retained_runtime", "ephemeral"],
};

/** Default output strategy preference. */
export const DEFAULT_OUTPUT_STRATEGY_ORDER: readonly OutputStrategy[] = ["durable_mount", "watch_and_upload", "final_collect"];

/** Runtime checkpoint kinds in preference order. */
export const RUNTIME_CHECKPOINT_KIND_ORDER: readonly RuntimeCheckpointKind[] = ["process", "filesystem"];

/**
 * Resolves a profile against capabilities into concrete strategies. Preferred strategies are tried
 * first (those the requirement does not allow are ignored), then the remaining eligible ones in
 * default order. Throws {@link CapabilityUnsupportedError} whose context names the `requirement`
 * (`workspace`, `outputs`, `runtime_checkpoint`, `harness_driver`) and what was offered.
 */
export function resolveManagedRuntimePlan(
  profile: ManagedRuntimeProfile,
  capabilities: ManagedRuntimeResourceCapabilities,
): ManagedRuntimePlan {
  return {
    workspaceStrategy: resolveWorkspace(profile, capabilities),
    outputStrategy: resolveOutputs(profile, capabilities),
    runtimeCheckpoint: resolveRuntimeCheckpoint(profile, capabilities),
    driver: resolveDriver(profile, capabilities),
  };
}

function resolveWorkspace(profile: ManagedRuntimeProfile, capabilities: ManagedRuntimeResourceCapabilities): WorkspaceStrategy {
  const requirement = profile.workspace.requirement;
  const eligible = ELIGIBLE_WORKSPACE_STRATEGIES[requirement];
  const offered = capabilities.workspace.strategies;
  const chosen = preferenceOrder(profile.workspace.preferredStrategies, eligible).find((strategy) => offered.includes(strategy));
  if (chosen) return chosen;
  const article = requirement === "ephemeral" ? "an" : "a";
  throw new CapabilityUnsupportedError({
    message: `cannot provide ${article} ${requirement} workspace (offered: ${list(offered)})`,
    context: { requirement: "workspace", workspaceRequirement: requirement, offered: [...offered] },
  });
}

function resolveOutputs(profile: ManagedRuntimeProfile, capabilities: ManagedRuntimeResourceCapabilities): OutputStrategy | null {
  const requirement = profile.outputs.requirement;
  if (requirement === "disabled") return null;
  const usable = capabilities.outputs.strategies
    .filter((capability) => requirement !== "durable" || capability.durability === "durable")
    .map((capability) => capability.strategy);
  const chosen = preferenceOrder(profile.outputs.preferredStrategies, DEFAULT_OUTPUT_STRATEGY_ORDER).find((strategy) =>
    usable.includes(strategy),
  );
  if (chosen) return chosen;
  const offered = capabilities.outputs.strategies.map((capability) => `${capability.strategy}/${capability.durability}`);
  throw new CapabilityUnsupportedError({
    message: `cannot provide ${requirement} Session outputs (offered: ${list(offered)})`,
    context: { requirement: "outputs", outputRequirement: requirement, offered },
  });
}

function resolveRuntimeCheckpoint(
  profile: ManagedRuntimeProfile,
  capabilities: ManagedRuntimeResourceCapabilities,
): RuntimeCheckpointKind | null {
  if (profile.runtimeCheckpoint === "disabled") return null;
  const offered = capabilities.sandbox.runtimeCheckpoints;
  const chosen = RUNTIME_CHECKPOINT_KIND_ORDER.find((kind) => offered.includes(kind)) ?? null;
  if (chosen || profile.runtimeCheckpoint === "optional") return chosen;
  throw new CapabilityUnsupportedError({
    message: `cannot provide a runtime checkpoint (offered: ${list(offered)})`,
    context: { requirement: "runtime_checkpoint", offered: [...offered] },
  });
}

function resolveDriver(profile: ManagedRuntimeProfile, capabilities: ManagedRuntimeResourceCapabilities): ManagedRuntimePlan["driver"] {
  const type = profile.driver.type;
  if (capabilities.harness.drivers.includes(type)) return type;
  throw new CapabilityUnsupportedError({
    message: `cannot run the ${type} harness driver (offered: ${list(capabilities.harness.drivers)})`,
    context: { requirement: "harness_driver", driver: type, offered: [...capabilities.harness.drivers] },
  });
}

/** Preferred entries that are eligible, then the remaining eligible entries in default order. */
function preferenceOrder<T>(preferred: readonly T[] | undefined, eligible: readonly T[]): T[] {
  const first = (preferred ?? []).filter((entry) => eligible.includes(entry));
  return [...new Set([...first, ...eligible])];
}

function list(values: readonly string[]): string {
  return values.length === 0 ? "none" : values.join(", ");
}
