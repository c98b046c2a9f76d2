import {
  CapabilityUnsupportedError,
  type ManagedRuntimeProfile,
  type ManagedRuntimeProviderDriverPort,
  type ManagedRuntimeProviderPlacement,
  type ManagedSandboxPort,
  parseManagedRuntimeProviderDriverDescriptor,
} from "@open-managed-agents/runtime-resource-contract";
import { resolveManagedRuntimePlan } from "../plan.js";
import type { ReconcilerSandbox } from "./confirm-gone.js";

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
  let sandbox: Promise<ManagedSandboxPort> | undefined;
  const ports = (): Promise<ManagedSandboxPort> => {
    sandbox ??= createSandbox(options).catch((error: unknown) => {
      sandbox = undefined;
      throw error;
    });
    return sandbox;
  };
  return {
    reap: async (input) => (await ports()).reap(input),
    inspect: async (lease) => (await ports()).inspect(lease),
  };
}

async function createSandbox(options: DriverReaperOptions): Promise<ManagedSandboxPort> {
  const descriptor = parseManagedRuntimeProviderDriverDescriptor(options.driver.descriptor(), { code: "invalid_config" });
  const placement = options.placement ?? descriptor.placements[0];
  if (placement === undefined || !descriptor.placements.includes(placement)) {
    throw new CapabilityUnsupportedError({
      message: `${descriptor.provider} does not list placement ${placement ?? "(none)"} to reap from`,
      context: { provider: descriptor.provider, placement: placement ?? null },
    });
  }
  const plan = resolveManagedRuntimePlan(REAP_PROFILE, descriptor.capabilities);
  const resources = await options.driver.create({
    environmentId: options.environmentId ?? "orphan-reconciler",
    placement,
    profile: REAP_PROFILE,
    plan,
    providerConfig: options.providerConfig ?? {},
  });
  return resources.sandbox;
}
