import { checkLease } from "./check-lease.js";
import { callPort } from "./port-call.js";
import { journalBinding, journalReturnedLease } from "./sandbox-journal.js";
import type { RunStep } from "./step.js";

const stage = "sandbox-acquire";

/**
 * Starts compute, unless a runtime checkpoint restore already produced a lease. The driver journals the
 * lease-to-be through the binding before it starts compute; a lease it did not journal is journaled here.
 */
export const acquireSandbox: RunStep = {
  stage,
  applies: (run) => run.lease === null,
  async run(run) {
    const fence = run.requireFence();
    const workspace = run.workspaceBinding;
    if (!workspace) return;
    const journal = journalBinding(run, stage);
    const pending = Promise.resolve().then(() =>
      run.options.sandbox.acquire({
        scope: run.scope,
        fence,
        plan: run.requireAdmission().plan,
        workspace,
        outputs: run.outputBinding,
        credentialEgress: run.egress?.binding ?? null,
        signal: run.signal,
        ...(journal ? { journal } : {}),
      }),
    );
    // Cleanup settles an acquire the run stopped waiting for, so a late lease is still terminated.
    run.pendingLease = pending;
    const lease = await callPort(run, stage, () => pending);
    run.pendingLease = null;
    run.lease = lease;
    checkLease(run, lease, stage);
    await journalReturnedLease(run, lease, stage);
    run.log.info("sandbox.acquired", {
      provider: lease.provider,
      runtimeId: lease.runtimeId,
      generation: fence.generation,
    });
  },
};
