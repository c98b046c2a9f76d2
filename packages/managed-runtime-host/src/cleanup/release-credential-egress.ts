import { cleanupCall } from "../transaction/port-call.js";
import type { RunStep } from "../transaction/step.js";

const stage = "credential-egress-release";

/** Frees the egress binding, with the fence it was prepared under. */
export const releaseCredentialEgress: RunStep = {
  stage,
  applies: (run) => run.egress !== null,
  async run(run) {
    const { egress } = run;
    const port = run.options.credentialEgress;
    if (!egress || !port) return;
    await cleanupCall(run, stage, () => port.release({ scope: run.scope, fence: egress.fence, binding: egress.binding }));
  },
};
