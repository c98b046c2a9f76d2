import {
  CapabilityDriftError,
  type HarnessDriverType,
  type ManagedRuntimeProviderDriverDescriptor,
  type ManagedRuntimeProviderResources,
  type OutputStrategyCapability,
  type RuntimeResourceScope,
  type WorkspaceStrategy,
  parseManagedRuntimeProviderDriverDescriptor,
  parseRecord,
} from "@open-managed-agents/runtime-resource-contract";
import {
  type ConformanceDurability,
  type ManagedRuntimeProviderConformance,
  type SandboxPortFact,
  managedRuntimeProviderConformanceSchema,
} from "./conformance-row.js";

/** Input of {@link deriveConformanceRow}. */
export interface DeriveConformanceRowInput {
  readonly descriptor: ManagedRuntimeProviderDriverDescriptor;
  /** Live ports from the driver's `create`. */
  readonly resources: ManagedRuntimeProviderResources;
  /** Facts about the tool-sandbox surface, which the managed ports cannot show. */
  readonly sandboxPortFacts: {
    readonly available: readonly SandboxPortFact[];
    readonly unavailable: readonly SandboxPortFact[];
  };
  readonly reason?: string;
  /** The workspace package of the driver; the row's provenance names it. A catalog row requires it. */
  readonly driverPackage?: string;
  /** Scope passed to the capability queries. @default a fixed derivation scope */
  readonly scope?: RuntimeResourceScope;
}

const DERIVATION_SCOPE: RuntimeResourceScope = {
  workspaceId: "conformance-derivation",
  environmentId: "conformance-derivation",
  sessionId: "conformance-derivation",
  workId: "conformance-derivation",
};

/**
 * Derives a catalog row from what a driver advertises and what its live ports report. Every advertised
 * capability must match the live ports exactly (strategies, durabilities, lanes, runtime checkpoints,
 * egress enforcement, memory-store mode); any difference throws `capability_drift` naming the field. A driver package asserts
 * the derived row equals its catalog row, so the catalog is checked against code on every test run.
 */
export async function deriveConformanceRow(
  input: DeriveConformanceRowInput,
): Promise<ManagedRuntimeProviderConformance> {
  const descriptor = parseManagedRuntimeProviderDriverDescriptor(input.descriptor);
  const { resources } = input;
  const scope = input.scope ?? DERIVATION_SCOPE;
  const [sandbox, workspace, outputs, harness] = await Promise.all([
    resources.sandbox.capabilities(scope),
    resources.workspace.capabilities(scope),
    resources.outputs.capabilities(scope),
    resources.harnessDriver.driverCapabilities(scope),
  ]);
  const advertised = descriptor.capabilities;
  const drift = (field: string, claimed: unknown, live: unknown): void => {
    if (canonical(claimed) !== canonical(live)) {
      throw new CapabilityDriftError({
        message: `${descriptor.provider} advertises ${field} ${canonical(claimed)} but its live ports report ${canonical(live)}`,
        context: { provider: descriptor.provider, field },
      });
    }
  };
  drift("sandbox.suspendResume", advertised.sandbox.suspendResume, sandbox.suspendResume);
  drift("sandbox.hardTerminate", advertised.sandbox.hardTerminate, sandbox.hardTerminate);
  drift(
    "sandbox.runtimeCheckpoints",
    sorted(advertised.sandbox.runtimeCheckpoints),
    sorted(sandbox.runtimeCheckpoints),
  );
  drift(
    "workspace.strategies",
    sorted(advertised.workspace.strategies),
    sorted(workspace.strategies),
  );
  drift(
    "outputs.strategies",
    sortedOutputs(advertised.outputs.strategies),
    sortedOutputs(outputs.strategies),
  );
  // The supervised lane is live when the harness port runs it natively or a supervisor transport lets the
  // registry wrap it; a transport alone does not make an unadvertised lane a claim.
  const liveLanes = new Set<HarnessDriverType>(harness.drivers);
  if (resources.supervisorTransport && advertised.harness.drivers.includes("openma_supervised"))
    liveLanes.add("openma_supervised");
  drift("harness.drivers", sorted(advertised.harness.drivers), sorted([...liveLanes]));
  if (sandbox.runtimeCheckpoints.length > 0 && !resources.runtimeCheckpoint)
    drift("runtimeCheckpoint port", "present", "absent");
  const liveEnforcement = resources.credentialEgress
    ? (await resources.credentialEgress.capabilities(scope)).enforcement
    : "unsupported";
  if (descriptor.credentialEgress.enforcement !== "unsupported" || resources.credentialEgress) {
    drift("credentialEgress.enforcement", descriptor.credentialEgress.enforcement, liveEnforcement);
  }
  drift(
    "memoryStores",
    descriptor.memoryStores ?? "unsupported",
    resources.memoryStores?.mode ?? "unsupported",
  );

  const row: ManagedRuntimeProviderConformance = {
    id: descriptor.provider,
    managedRuntime: true,
    status: "managed-runtime",
    driverLanes: sorted(advertised.harness.drivers),
    lifecycle: {
      lease: "host-fenced",
      suspendResume: sandbox.suspendResume,
      hardTerminate: sandbox.hardTerminate === "supported" ? "supported" : "provider-specific",
      orphanReap: "host-managed",
    },
    workspace: {
      strategies: [...workspace.strategies],
      durability: workspaceDurability(workspace.strategies),
    },
    outputs: {
      strategies: outputs.strategies.map((entry) => entry.strategy),
      durability: outputDurability(outputs.strategies),
    },
    runtimeCheckpoints: [...sandbox.runtimeCheckpoints],
    ...(descriptor.memoryStores ? { memoryStores: descriptor.memoryStores } : {}),
    sandboxPortFacts: {
      available: [...input.sandboxPortFacts.available],
      unavailable: [...input.sandboxPortFacts.unavailable],
    },
    ...(input.reason === undefined ? {} : { reason: input.reason }),
    provenance:
      input.driverPackage === undefined
        ? { source: "derived" }
        : { source: "derived", driverPackage: input.driverPackage },
  };
  return parseRecord(managedRuntimeProviderConformanceSchema, row, {
    record: "derived conformance row",
  });
}

/**
 * Field paths where two rows differ, comparing lists as sets and ignoring `reason` (prose, not a
 * capability) and `provenance`. Empty when the rows agree.
 */
export function diffConformanceRows(
  expected: ManagedRuntimeProviderConformance,
  actual: ManagedRuntimeProviderConformance,
): string[] {
  const fields: Record<string, (row: ManagedRuntimeProviderConformance) => unknown> = {
    id: (row) => row.id,
    managedRuntime: (row) => row.managedRuntime,
    status: (row) => row.status,
    driverLanes: (row) => sorted(row.driverLanes),
    "lifecycle.lease": (row) => row.lifecycle.lease,
    "lifecycle.suspendResume": (row) => row.lifecycle.suspendResume,
    "lifecycle.hardTerminate": (row) => row.lifecycle.hardTerminate,
    "lifecycle.orphanReap": (row) => row.lifecycle.orphanReap,
    "workspace.strategies": (row) => sorted(row.workspace.strategies),
    "workspace.durability": (row) => row.workspace.durability,
    "outputs.strategies": (row) => sorted(row.outputs.strategies),
    "outputs.durability": (row) => row.outputs.durability,
    runtimeCheckpoints: (row) => sorted(row.runtimeCheckpoints),
    memoryStores: (row) => row.memoryStores ?? "unsupported",
    "sandboxPortFacts.available": (row) => sorted(row.sandboxPortFacts.available),
    "sandboxPortFacts.unavailable": (row) => sorted(row.sandboxPortFacts.unavailable),
  };
  return Object.entries(fields)
    .filter(([, read]) => canonical(read(expected)) !== canonical(read(actual)))
    .map(([path]) => path);
}

function workspaceDurability(strategies: readonly WorkspaceStrategy[]): ConformanceDurability {
  if (
    strategies.some((strategy) => strategy === "durable_mount" || strategy === "checkpoint_restore")
  )
    return "durable";
  if (strategies.includes("retained_runtime")) return "best_effort";
  return "unavailable";
}

function outputDurability(strategies: readonly OutputStrategyCapability[]): ConformanceDurability {
  if (strategies.length === 0) return "unavailable";
  return strategies.some((entry) => entry.durability === "durable") ? "durable" : "best_effort";
}

function sorted<T extends string>(values: readonly T[]): T[] {
  return [...values].sort();
}

function sortedOutputs(values: readonly OutputStrategyCapability[]): string[] {
  return values.map((entry) => `${entry.strategy}:${entry.durability}`).sort();
}

function canonical(value: unknown): string {
  return JSON.stringify(value);
}
