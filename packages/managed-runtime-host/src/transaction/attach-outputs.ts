import { callPort } from "./port-call.js";
import type { RunStep } from "./step.js";

const stage = "outputs-attach";

/** Makes `/mnt/session/outputs` exist (or mounted) in the sandbox. */
export const attachOutputs: RunStep = {
  stage,
  applies: (run) => run.outputBinding !== null,
  async run(run) {
    const { outputBinding: binding, lease } = run;
    const strategy = run.requireAdmission().plan.outputStrategy;
    if (!binding || !lease || strategy === null) return;
    const fence = run.requireFence();
    await callPort(run, stage, (signal) =>
      run.options.outputs.attach({
        scope: run.scope,
        fence,
        strategy,
        binding,
        sandbox: lease,
        signal,
      }),
    );
  },
};
