import { callPort } from "./port-call.js";
import type { RunStep } from "./step.js";

const stage = "workspace-attach";

/** Makes the workspace binding visible at `/workspace` in the sandbox. */
export const attachWorkspace: RunStep = {
  stage,
  applies: (run) => run.workspaceBinding !== null,
  async run(run) {
    const { workspaceBinding: binding, lease } = run;
    if (!binding || !lease) return;
    const fence = run.requireFence();
    await callPort(run, stage, (signal) =>
      run.options.workspace.attach({ scope: run.scope, fence, binding, sandbox: lease, signal }),
    );
  },
};
