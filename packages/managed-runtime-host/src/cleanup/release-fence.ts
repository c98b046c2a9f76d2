import { cleanupCall } from "../transaction/port-call.js";
import type { RunStep } from "../transaction/step.js";
import { cleanupReason } from "./cleanup-reason.js";

const stage = "fence-release";

/** Gives the fence up so the next owner need not wait for it to expire. */
export const releaseFence: RunStep = {
  stage,
  applies: (run) => run.fence !== null,
  async run(run) {
    const fence = run.requireFence();
    await cleanupCall(run, stage, () =>
      run.options.fences.release({ fence, reason: cleanupReason(run) }),
    );
  },
};
