import { cleanupCall } from "../transaction/port-call.js";
import type { RunStep } from "../transaction/step.js";

/**
 * Releases the output binding once something was published (or a publish may have landed), and aborts
 * it otherwise so unpublished uploads are discarded.
 */
export const releaseOutputs: RunStep = {
  stage: "outputs-release",
  applies: (run) => run.outputBinding !== null,
  async run(run) {
    const binding = run.outputBinding;
    if (!binding) return;
    const fence = run.requireFence();
    const { outputs } = run.options;
    if (run.anyPublished || run.publishUncertain) {
      await cleanupCall(run, "outputs-release", () =>
        outputs.release({ scope: run.scope, fence, binding }),
      );
      return;
    }
    const reason = run.outcome?.type === "lease_lost" ? "lease_lost" : "failed";
    await cleanupCall(run, "outputs-abort", () =>
      outputs.abort({ scope: run.scope, fence, binding, reason }),
    );
  },
};
