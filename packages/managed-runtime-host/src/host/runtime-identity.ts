import {
  type HarnessDriverDeclaration,
  type ManagedSandboxLease,
  type RuntimeCheckpointRef,
  parseRuntimeCheckpointRef,
} from "@open-managed-agents/runtime-resource-contract";
import type { RunContext } from "./run-context.js";

/** Harness version recorded for the AMA worker lane, which has no declared version. */
export const AMA_WORKER_HARNESS_VERSION = "ama-worker-v1";

/** The harness version a runtime checkpoint is tied to. */
export function harnessVersionOf(driver: HarnessDriverDeclaration): string {
  return driver.type === "openma_supervised" ? driver.harness.version : AMA_WORKER_HARNESS_VERSION;
}

/**
 * Stable, key-sorted JSON of the harness process shape: driver type, command, args, cwd and the sorted
 * env key names. Env values are left out because they may be secrets.
 */
export function runtimeIdentityOf(driver: HarnessDriverDeclaration): string {
  const process = driver.type === "openma_supervised" ? driver.supervisor : driver.process;
  return JSON.stringify({
    args: process.args ?? [],
    command: process.command,
    cwd: process.cwd ?? null,
    driver: driver.type,
    envKeys: Object.keys(process.env ?? {}).sort(),
  });
}

/**
 * Whether the prior publication's runtime checkpoint may be restored by this run: same kind as the plan,
 * same session, an older generation, the same harness version and identity, and well-formed numbers.
 */
export function reusableCheckpoint(run: RunContext): RuntimeCheckpointRef | null {
  const ref = run.publication?.runtimeCheckpoint;
  const admission = run.requireAdmission();
  const fence = run.requireFence();
  if (!ref || !run.options.runtimeCheckpoint || admission.plan.runtimeCheckpoint === null)
    return null;
  try {
    parseRuntimeCheckpointRef(ref);
  } catch {
    return null;
  }
  const matches =
    ref.kind === admission.plan.runtimeCheckpoint &&
    ref.sessionId === run.scope.sessionId &&
    Number.isSafeInteger(ref.workGeneration) &&
    Number.isSafeInteger(ref.workspaceRevision) &&
    ref.workGeneration < fence.generation &&
    ref.harnessVersion === admission.harnessVersion &&
    ref.runtimeIdentity === admission.runtimeIdentity;
  return matches ? ref : null;
}

/** Why a freshly created runtime checkpoint does not describe this run, or null when it does. */
export function checkpointMismatch(
  run: RunContext,
  ref: RuntimeCheckpointRef,
  lease: ManagedSandboxLease,
  workspaceRevision: number,
): string | null {
  const admission = run.requireAdmission();
  const expected: Record<string, unknown> = {
    kind: admission.plan.runtimeCheckpoint,
    provider: lease.provider,
    sourceRuntimeId: lease.runtimeId,
    sessionId: run.scope.sessionId,
    workGeneration: run.requireFence().generation,
    workspaceRevision,
    harnessVersion: admission.harnessVersion,
    runtimeIdentity: admission.runtimeIdentity,
  };
  const actual = ref as unknown as Record<string, unknown>;
  const field = Object.keys(expected).find((key) => expected[key] !== actual[key]);
  return field ? `runtime checkpoint ${field} does not match the run` : null;
}
