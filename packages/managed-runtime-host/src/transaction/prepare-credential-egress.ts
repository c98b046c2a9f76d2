import { CapabilityUnsupportedError } from "@open-managed-agents/runtime-resource-contract";
import { markHostError } from "../errors.js";
import { callPort, idempotencyKey } from "./port-call.js";
import type { RunStep } from "./step.js";

const stage = "credential-egress-prepare";

/** Prepares egress policy before acquire, when the profile asks for it and a port exists. */
export const prepareCredentialEgress: RunStep = {
  stage,
  applies: (run) =>
    run.requireAdmission().egressRequirement !== "disabled" &&
    run.options.credentialEgress !== undefined,
  async run(run) {
    const egress = run.options.credentialEgress;
    const requirement = run.requireAdmission().egressRequirement;
    if (!egress || requirement === "disabled") return;
    const fence = run.requireFence();
    const binding = await callPort(run, stage, (signal) =>
      egress.prepare({
        scope: run.scope,
        fence,
        requirement,
        idempotencyKey: idempotencyKey(run, stage),
        signal,
      }),
    );
    if (binding) {
      run.egress = { binding, fence };
      return;
    }
    if (requirement === "required") {
      throw markHostError(
        new CapabilityUnsupportedError({
          message: "credential egress is required but the port prepared no binding",
          context: { requirement: "credential_egress", stage: stage },
        }),
      );
    }
  },
};
