import { callPort, idempotencyKey } from "./port-call.js";
import type { RunStep } from "./step.js";

const stage = "outputs-prepare";

/** Prepares output storage, when the plan has an output strategy. */
export const prepareOutputs: RunStep = {
  stage,
  applies: (run) => run.requireAdmission().plan.outputStrategy !== null,
  async run(run) {
    const strategy = run.requireAdmission().plan.outputStrategy;
    if (strategy === null) return;
    const fence = run.requireFence();
    run.outputBinding = await callPort(run, stage, (signal) =>
      run.options.outputs.prepare({
        scope: run.scope,
        fence,
        strategy,
        idempotencyKey: idempotencyKey(run, stage),
        signal,
      }),
    );
  },
};
