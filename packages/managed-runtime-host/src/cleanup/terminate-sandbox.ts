import {
  type ManagedSandboxLease,
  redactSecrets,
} from "@open-managed-agents/runtime-resource-contract";
import type { RunContext } from "../host/run-context.js";
import { cleanupCall } from "../transaction/port-call.js";
import type { RunStep } from "../transaction/step.js";
import { cleanupReason } from "./cleanup-reason.js";

const stage = "sandbox-terminate";

/**
 * Stops compute unless a retained runtime was published. When terminate fails, the runtime is enqueued
 * as a token-free orphan for the reconciler to reap.
 */
export const terminateSandbox: RunStep = {
  stage,
  applies: (run) => run.lease !== null && !run.retained,
  async run(run) {
    const lease = run.lease;
    if (!lease) return;
    const fence = run.requireFence();
    const reason = cleanupReason(run);
    const settled = await cleanupCall(run, stage, () =>
      run.options.sandbox.terminate({ scope: run.scope, fence, lease, reason }),
    );
    if (settled.ok) {
      run.terminated = true;
      run.log.info("sandbox.terminated", {
        provider: lease.provider,
        runtimeId: lease.runtimeId,
        reason,
      });
      return;
    }
    await orphanLease(run, lease, settled.error.message);
  },
};

/** Records a runtime the run could not stop as a token-free orphan; reports a leak when even that fails. */
export async function orphanLease(
  run: RunContext,
  lease: ManagedSandboxLease,
  message: string,
): Promise<void> {
  const fence = run.requireFence();
  const sandbox = redactLease(lease, run.secrets());
  const settled = await cleanupCall(run, "orphan-enqueue", () =>
    run.options.orphans.enqueue({
      scope: run.scope,
      generation: fence.generation,
      ownerId: run.options.ownerId,
      sandbox,
      reason: cleanupReason(run),
      error: redactSecrets(message, run.secrets()),
    }),
  );
  const fields = {
    provider: lease.provider,
    runtimeId: sandbox.runtimeId,
    generation: fence.generation,
  };
  if (settled.ok) run.log.warn("sandbox.orphaned", { ...fields, orphanId: settled.value.id });
  else run.log.error("sandbox.leaked", fields);
}

/** The lease as stored in an orphan record: every token occurrence redacted. */
function redactLease(lease: ManagedSandboxLease, secrets: readonly string[]): ManagedSandboxLease {
  const metadata = lease.metadata
    ? Object.fromEntries(
        Object.entries(lease.metadata).map(([key, value]) => [
          key,
          typeof value === "string" ? redactSecrets(value, secrets) : value,
        ]),
      )
    : undefined;
  return {
    provider: lease.provider,
    runtimeId: redactSecrets(lease.runtimeId, secrets),
    ...(metadata ? { metadata } : {}),
  };
}
