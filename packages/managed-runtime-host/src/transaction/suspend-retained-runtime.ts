import { callPort } from "./port-call.js";
import { checkLease } from "./check-lease.js";
import type { RunStep } from "./step.js";

const stage = "sandbox-suspend";

/** Retains the runtime before the workspace checkpoint; the suspended lease replaces the current one. */
export const suspendRetainedRuntime: RunStep = {
  stage,
  applies: (run) => run.requireAdmission().plan.workspaceStrategy === "retained_runtime",
  async run(run) {
    const lease = run.lease;
    if (!lease) return;
    const fence = run.requireFence();
    const suspended = await callPort(run, stage, (signal) =>
      run.options.sandbox.suspend({ scope: run.scope, fence, lease, signal }),
    );
    run.suspended = true;
    run.lease = suspended;
    checkLease(run, suspended, stage);
  },
};
