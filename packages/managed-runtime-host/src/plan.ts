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
export const ELIGIBLE_WORKSPACE_STRATEGIES: Readonly<
  Record<WorkspaceRequirement, readonly WorkspaceStrategy[]>
> = {
  durable: ["durable_mount", "checkpoint_restore"],
  continuable: ["durable_mount", "checkpoint_restore", "retained_runtime"],
  ephemeral: ["durable_mount", "checkpoint_restore", "retained_runtime", "ephemeral"],
};

/** Default output strategy preference. */
export const DEFAULT_OUTPUT_STRATEGY_ORDER: readonly OutputStrategy[] = [
  "durable_mount",
  "watch_and_upload",
  "final_collect",
];

/** Runtime checkpoint kinds in preference order. */
export const RUNTIME_CHECKPOINT_KIND_ORDER: readonly RuntimeCheckpointKind[] = [
  "process",
  "filesystem",
];

/**
 * Resolves a profile against capabilities into concrete strategies. Without `preferredStrategies` (or
 * with an empty list) the first offered eligible strategy in default order wins. With them, they are
 * the set of acceptable strategies in order of preference: the first one that the requirement allows
 * and the driver offers wins, and when none is, the plan is refused (no fallback to other strategies).
 * Throws {@link CapabilityUnsupportedError} whose context names the `requirement` (`workspace`,
 * `outputs`, `runtime_checkpoint`, `harness_driver`), the `preferences` when given, and what was `offered`.
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

function resolveWorkspace(
  profile: ManagedRuntimeProfile,
  capabilities: ManagedRuntimeResourceCapabilities,
): WorkspaceStrategy {
  const requirement = profile.workspace.requirement;
  const eligible = ELIGIBLE_WORKSPACE_STRATEGIES[requirement];
  const offered = capabilities.workspace.strategies;
  const preferences = given(profile.workspace.preferredStrategies);
  const chosen = acceptable(preferences, eligible).find((strategy) => offered.includes(strategy));
  if (chosen) return chosen;
  const article = requirement === "ephemeral" ? "an" : "a";
  throw new CapabilityUnsupportedError({
    message: `cannot provide ${article} ${requirement} workspace${preferred(preferences)} (offered: ${list(offered)})`,
    context: {
      requirement: "workspace",
      workspaceRequirement: requirement,
      ...(preferences ? { preferences: [...preferences] } : {}),
      offered: [...offered],
    },
  });
}

function resolveOutputs(
  profile: ManagedRuntimeProfile,
  capabilities: ManagedRuntimeResourceCapabilities,
): OutputStrategy | null {
  const requirement = profile.outputs.requirement;
  if (requirement === "disabled") return null;
  const usable = capabilities.outputs.strategies
    .filter((capability) => requirement !== "durable" || capability.durability === "durable")
    .map((capability) => capability.strategy);
  const preferences = given(profile.outputs.preferredStrategies);
  const chosen = acceptable(preferences, DEFAULT_OUTPUT_STRATEGY_ORDER).find((strategy) =>
    usable.includes(strategy),
  );
  if (chosen) return chosen;
  const offered = capabilities.outputs.strategies.map(
    (capability) => `${capability.strategy}/${capability.durability}`,
  );
  throw new CapabilityUnsupportedError({
    message: `cannot provide ${requirement} Session outputs${preferred(preferences)} (offered: ${list(offered)})`,
    context: {
      requirement: "outputs",
      outputRequirement: requirement,
      ...(preferences ? { preferences: [...preferences] } : {}),
      offered,
    },
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

function resolveDriver(
  profile: ManagedRuntimeProfile,
  capabilities: ManagedRuntimeResourceCapabilities,
): ManagedRuntimePlan["driver"] {
  const type = profile.driver.type;
  if (capabilities.harness.drivers.includes(type)) return type;
  throw new CapabilityUnsupportedError({
    message: `cannot run the ${type} harness driver (offered: ${list(capabilities.harness.drivers)})`,
    context: {
      requirement: "harness_driver",
      driver: type,
      offered: [...capabilities.harness.drivers],
    },
  });
}

/** The preferences, when a non-empty list was given. */
function given<T>(preferences: readonly T[] | undefined): readonly T[] | undefined {
  return preferences && preferences.length > 0 ? preferences : undefined;
}

/** Candidates in order: the eligible preferences when given (and nothing else), else every eligible entry in default order. */
function acceptable<T>(preferences: readonly T[] | undefined, eligible: readonly T[]): T[] {
  return preferences
    ? [...new Set(preferences.filter((entry) => eligible.includes(entry)))]
    : [...eligible];
}

function preferred(preferences: readonly string[] | undefined): string {
  return preferences ? ` with the preferred strategies ${list(preferences)}` : "";
}

function list(values: readonly string[]): string {
  return values.length === 0 ? "none" : values.join(", ");
}
