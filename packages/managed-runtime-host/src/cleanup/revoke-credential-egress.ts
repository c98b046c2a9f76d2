import type { RunStep } from "../transaction/step.js";
import { cleanupReason } from "./cleanup-reason.js";
import { credentialEgressCall } from "./credential-egress-call.js";

const stage = "credential-egress-revoke";

/**
 * Stops credential injection before compute is stopped or retained. A failed revoke forces termination
 * even of a runtime that would otherwise be retained.
 */
export const revokeCredentialEgress: RunStep = {
  stage,
  applies: (run) => run.egress !== null,
  async run(run) {
    const settled = await credentialEgressCall(run, stage, (port, target) =>
      port.revoke({ ...target, reason: cleanupReason(run) }),
    );
    if (settled && !settled.ok && run.retained) {
      run.retained = false;
      run.log.warn("sandbox.retention_cancelled", { stage });
    }
  },
};
