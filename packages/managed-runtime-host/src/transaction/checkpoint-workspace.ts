import {
  type WorkspaceCheckpointCandidate,
  parseWorkspaceCheckpointCandidate,
} from "@open-managed-agents/runtime-resource-contract";
import type { RunContext } from "../host/run-context.js";
import { callPort, idempotencyKey } from "./port-call.js";
import type { RunStep } from "./step.js";

/** Captures `/workspace` as the candidate the final publish activates. */
export const checkpointWorkspace: RunStep = {
  stage: "workspace-checkpoint",
  applies: (run) => run.workspaceBinding !== null,
  async run(run) {
    run.workspaceCandidate = await takeWorkspaceCheckpoint(run, "workspace-checkpoint");
  },
};

/** One workspace checkpoint under `stage`, validated. */
export async function takeWorkspaceCheckpoint(
  run: RunContext,
  stage: string,
): Promise<WorkspaceCheckpointCandidate> {
  const { workspaceBinding: binding, lease } = run;
  if (!binding || !lease) throw new Error("a workspace checkpoint needs a binding and a sandbox");
  const fence = run.requireFence();
  const candidate = await callPort(run, stage, (signal) =>
    run.options.workspace.checkpoint({
      scope: run.scope,
      fence,
      binding,
      sandbox: lease,
      idempotencyKey: idempotencyKey(run, stage),
      signal,
    }),
  );
  return parseWorkspaceCheckpointCandidate(candidate);
}
