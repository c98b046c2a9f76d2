import type { ManagedSandboxLease } from "@open-managed-agents/runtime-resource-contract";
import type { RunContext } from "../host/run-context.js";
import { callWithDeadline } from "../transaction/port-call.js";
import type { RunStep } from "../transaction/step.js";
import { orphanLease } from "./terminate-sandbox.js";

const stage = "sandbox-acquire-settle";

/**
 * Waits (up to the cleanup timeout) for an acquire or restore the run stopped waiting for. A lease that
 * arrives in time is terminated like any other; one that arrives later, after the run returned, is
 * enqueued as an orphan the moment it arrives, so the reconciler reaps it.
 */
export const settleAbandonedLease: RunStep = {
  stage,
  applies: (run) => run.pendingLease !== null && run.lease === null,
  async run(run) {
    const pending = run.pendingLease;
    if (!pending) return;
    run.pendingLease = null;
    const settled = await callWithDeadline(run, stage, run.options.cleanupTimeoutMs, () => pending);
    if (settled.ok) {
      run.lease = settled.value;
      run.log.warn("sandbox.late_lease", {
        provider: settled.value.provider,
        runtimeId: settled.value.runtimeId,
      });
      return;
    }
    pending.then((lease) => orphanLateLease(run, lease)).catch(() => undefined);
  },
};

async function orphanLateLease(run: RunContext, lease: ManagedSandboxLease): Promise<void> {
  run.log.warn("sandbox.late_lease", {
    provider: lease.provider,
    runtimeId: lease.runtimeId,
    afterRun: true,
  });
  await orphanLease(run, lease, "the lease arrived after the run had ended");
}
