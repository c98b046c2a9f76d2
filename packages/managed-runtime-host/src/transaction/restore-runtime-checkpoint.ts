import type { ManagedSandboxLease } from "@open-managed-agents/runtime-resource-contract";
import { redactedMessage } from "../errors.js";
import { reusableCheckpoint } from "../host/runtime-identity.js";
import { checkLease } from "./check-lease.js";
import { callPort } from "./port-call.js";
import { journalBinding, journalReturnedLease } from "./sandbox-journal.js";
import type { RunStep } from "./step.js";

const stage = "runtime-checkpoint-restore";

/**
 * Tries to restore the prior runtime checkpoint into a new runtime. An optimisation only: any failure
 * falls through to a fresh acquire (a lost lease does not).
 */
export const restoreRuntimeCheckpoint: RunStep = {
  stage,
  applies: (run) => reusableCheckpoint(run) !== null,
  async run(run) {
    const port = run.options.runtimeCheckpoint;
    const checkpoint = reusableCheckpoint(run);
    if (!port || !checkpoint) return;
    const fence = run.requireFence();
    const journal = journalBinding(run, stage);
    const pending = Promise.resolve().then(() =>
      port.restore({
        scope: run.scope,
        fence,
        checkpoint,
        signal: run.signal,
        ...(journal ? { journal } : {}),
      }),
    );
    run.pendingLease = pending;
    let lease: ManagedSandboxLease;
    try {
      lease = await callPort(run, stage, () => pending);
    } catch (error) {
      if (run.outcome) throw error;
      run.pendingLease = null;
      run.log.warn("runtime_checkpoint.restore_failed", {
        stage: stage,
        message: redactedMessage(error, run.secrets()),
      });
      return;
    }
    run.pendingLease = null;
    // A restored runtime exists from here on: cleanup terminates it even if the lease is malformed.
    run.lease = lease;
    checkLease(run, lease, stage);
    await journalReturnedLease(run, lease, stage);
    run.log.info("runtime_checkpoint.restored", {
      checkpointId: checkpoint.checkpointId,
      runtimeId: lease.runtimeId,
    });
  },
};
