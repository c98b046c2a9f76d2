import type { RunStep } from "../transaction/step.js";
import { credentialEgressCall } from "./credential-egress-call.js";

const stage = "credential-egress-release";

/** Frees the egress binding, with the fence it was prepared under. */
export const releaseCredentialEgress: RunStep = {
  stage,
  applies: (run) => run.egress !== null,
  async run(run) {
    await credentialEgressCall(run, stage, (port, target) => port.release(target));
  },
};
