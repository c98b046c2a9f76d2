import { cleanupCall } from "../transaction/port-call.js";
import type { RunStep } from "../transaction/step.js";
import { cleanupReason } from "./cleanup-reason.js";

const stage = "credential-egress-revoke";

/**
 * Stops credential injection before compute is stopped or retained. A failed revoke forces termination
 * even of a runtime that would otherwise be retained.
 */
export const revokeCredentialEgress: RunStep = {
  stage,
  applies: (run) => run.egress !== null,
  async run(run) {
    const { egress } = run;
    const port = run.options.credentialEgress;
    if (!egress || !port) return;
    const settled = await cleanupCall(run, stage, () =>
      port.revoke({ scope: run.scope, fence: egress.fence, binding: egress.binding, reason: cleanupReason(run) }),
    );
    if (!settled.ok && run.retained) {
      run.retained = false;
      run.log.warn("sandbox.retention_cancelled", { stage });
    }
  },
};
