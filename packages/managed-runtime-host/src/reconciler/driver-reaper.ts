import {
  CapabilityUnsupportedError,
  type ManagedRuntimeProfile,
  type ManagedRuntimeProviderDriverPort,
  type ManagedRuntimeProviderPlacement,
  type ManagedRuntimeProviderResources,
  parseManagedRuntimeProviderDriverDescriptor,
} from "@open-managed-agents/runtime-resource-contract";
import { resolveManagedRuntimePlan } from "../plan.js";
import type { ReconcilerSandbox } from "./confirm-gone.js";
import type { ReconcilerSalvage } from "./salvage-sandbox.js";

/** Options of {@link createDriverReaper}. */
export interface DriverReaperOptions {
  readonly driver: ManagedRuntimeProviderDriverPort;
  /** Placement whose ports reap. @default the descriptor's first placement */
  readonly placement?: ManagedRuntimeProviderPlacement;
  /** Passed to `create()`, as the registry passes it for a run. @default {} */
  readonly providerConfig?: Readonly<Record<string, unknown>>;
  /** Environment id passed to `create()`. @default "orphan-reconciler" */
  readonly environmentId?: string;
}

// Reaping works from a serialized lease and needs no work item; `create()` still takes a profile, so the
// reaper asks for the least one: nothing kept, nothing collected, a harness that is never started.
const REAP_PROFILE: ManagedRuntimeProfile = {
  workspace: { requirement: "ephemeral" },
  outputs: { requirement: "disabled" },
  runtimeCheckpoint: "disabled",
  driver: { type: "ama_worker", process: { command: "true" } },
};

/**
 * The `reap` and `inspect` of a driver's sandbox port, for {@link createManagedRuntimeOrphanReconciler}'s
 * `sandbox`, without a profile. The driver's ports are created on the first call (again after a failed
 * create) and kept. Throws `capability_unsupported` when the driver lists neither the placement nor the
 * `ama_worker` harness the reap profile names.
 */
export function createDriverReaper(options: DriverReaperOptions): Required<ReconcilerSandbox> {
  const ports = lazyResources(options, REAP_PROFILE);
  return {
    reap: async (input) => (await ports()).sandbox.reap(input),
    inspect: async (lease) => (await ports()).sandbox.inspect(lease),
  };
}

// A salvage captures `/workspace` as a portable checkpoint, so it asks for a durable checkpoint_restore workspace.
const SALVAGE_PROFILE: ManagedRuntimeProfile = {
  ...REAP_PROFILE,
  workspace: { requirement: "durable", preferredStrategies: ["checkpoint_restore"] },
};

/**
 * The harness port's `endAbandoned` and the workspace port of a driver, for
 * {@link createManagedRuntimeOrphanReconciler}'s `salvage`, without a work item. The ports are created on the
 * first call (again after a failed create) and kept. A call throws `capability_unsupported` when the driver
 * cannot end an abandoned harness or offers no `checkpoint_restore` workspace; the reconciler then reaps only.
 */
export function createDriverSalvage(options: DriverReaperOptions): ReconcilerSalvage {
  const ports = lazyResources(options, SALVAGE_PROFILE);
  const salvagePorts = async () => {
    const resources = await ports();
    const { endAbandoned } = resources.harnessDriver;
    if (!endAbandoned) {
      throw new CapabilityUnsupportedError({
        message: "the driver cannot end an abandoned harness, so its sandboxes are only reaped",
      });
    }
    if (
      !(await resources.workspace.capabilities(SALVAGE_SCOPE)).strategies.includes(
        "checkpoint_restore",
      )
    ) {
      throw new CapabilityUnsupportedError({
        message: "the driver offers no checkpoint_restore workspace to salvage into",
      });
    }
    return { resources, endAbandoned: endAbandoned.bind(resources.harnessDriver) };
  };
  return {
    endAbandoned: async (input) => (await salvagePorts()).endAbandoned(input),
    workspace: {
      materialize: async (input) => (await salvagePorts()).resources.workspace.materialize(input),
      checkpoint: async (input) => (await salvagePorts()).resources.workspace.checkpoint(input),
      release: async (input) => (await salvagePorts()).resources.workspace.release(input),
    },
  };
}

const SALVAGE_SCOPE = {
  workspaceId: "orphan-reconciler",
  environmentId: "orphan-reconciler",
  sessionId: "orphan-reconciler",
  workId: "orphan-reconciler",
};

/** The driver's ports for `profile`, created on the first call (again after a failed create) and kept. */
function lazyResources(
  options: DriverReaperOptions,
  profile: ManagedRuntimeProfile,
): () => Promise<ManagedRuntimeProviderResources> {
  let resources: Promise<ManagedRuntimeProviderResources> | undefined;
  return () => {
    resources ??= createResources(options, profile).catch((error: unknown) => {
      resources = undefined;
      throw error;
    });
    return resources;
  };
}

async function createResources(
  options: DriverReaperOptions,
  profile: ManagedRuntimeProfile,
): Promise<ManagedRuntimeProviderResources> {
  const descriptor = parseManagedRuntimeProviderDriverDescriptor(options.driver.descriptor(), {
    code: "invalid_config",
  });
  const placement = options.placement ?? descriptor.placements[0];
  if (placement === undefined || !descriptor.placements.includes(placement)) {
    throw new CapabilityUnsupportedError({
      message: `${descriptor.provider} does not list placement ${placement ?? "(none)"} to reap from`,
      context: { provider: descriptor.provider, placement: placement ?? null },
    });
  }
  const plan = resolveManagedRuntimePlan(profile, descriptor.capabilities);
  return options.driver.create({
    environmentId: options.environmentId ?? "orphan-reconciler",
    placement,
    profile,
    plan,
    providerConfig: options.providerConfig ?? {},
  });
}
