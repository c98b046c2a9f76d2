import { cleanupCall } from "../transaction/port-call.js";
import type { RunStep } from "../transaction/step.js";

const stage = "workspace-release";

/** Frees the workspace binding's local resources. */
export const releaseWorkspace: RunStep = {
  stage,
  applies: (run) => run.workspaceBinding !== null,
  async run(run) {
    const binding = run.workspaceBinding;
    if (!binding) return;
    const fence = run.requireFence();
    await cleanupCall(run, stage, () =>
      run.options.workspace.release({ scope: run.scope, fence, binding }),
    );
  },
};
