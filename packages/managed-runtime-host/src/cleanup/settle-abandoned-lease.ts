import { callWithDeadline } from "../transaction/port-call.js";
import type { RunStep } from "../transaction/step.js";

const stage = "sandbox-acquire-settle";

/**
 * Waits (up to the cleanup timeout) for an acquire or restore the run stopped waiting for. A lease that
 * still arrives is terminated like any other.
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
      run.log.warn("sandbox.late_lease", { provider: settled.value.provider, runtimeId: settled.value.runtimeId });
    }
  },
};
