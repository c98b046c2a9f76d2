import { callPort } from "./port-call.js";
import type { RunStep } from "./step.js";

const stage = "credential-egress-attach";

/** Binds the prepared egress policy to the sandbox. */
export const attachCredentialEgress: RunStep = {
  stage,
  applies: (run) => run.egress !== null,
  async run(run) {
    const { egress, lease } = run;
    const port = run.options.credentialEgress;
    if (!egress || !lease || !port) return;
    await callPort(run, stage, (signal) =>
      port.attach({
        scope: run.scope,
        fence: egress.fence,
        binding: egress.binding,
        sandbox: lease,
        signal,
      }),
    );
  },
};
