import {
  CapabilityDriftError,
  parseRuntimeCheckpointRef,
} from "@open-managed-agents/runtime-resource-contract";
import { markHostError, stageError } from "../errors.js";
import { checkpointMismatch } from "../host/runtime-identity.js";
import { callPort } from "./port-call.js";
import type { RunStep } from "./step.js";

const stage = "runtime-checkpoint-create";

/**
 * Takes the planned runtime checkpoint after the workspace checkpoint and validates that it describes
 * this run. A failure is a warning unless the profile requires the checkpoint.
 */
export const createRuntimeCheckpoint: RunStep = {
  stage,
  applies: (run) =>
    run.requireAdmission().plan.runtimeCheckpoint !== null &&
    run.options.runtimeCheckpoint !== undefined,
  async run(run) {
    const port = run.options.runtimeCheckpoint;
    const kind = run.requireAdmission().plan.runtimeCheckpoint;
    const { lease, workspaceCandidate } = run;
    if (!port || kind === null || !lease || !workspaceCandidate) return;
    const fence = run.requireFence();
    const { harnessVersion, runtimeIdentity } = run.requireAdmission();
    try {
      const ref = parseRuntimeCheckpointRef(
        await callPort(
          run,
          stage,
          () =>
            port.create({
              scope: run.scope,
              fence,
              sandbox: lease,
              kind,
              workspaceRevision: workspaceCandidate.revision,
              harnessVersion,
              runtimeIdentity,
            }),
          { unsignalled: true },
        ),
      );
      const mismatch = checkpointMismatch(run, ref, lease, workspaceCandidate.revision);
      if (mismatch)
        throw markHostError(new CapabilityDriftError({ message: mismatch, context: { stage } }));
      run.runtimeCheckpointRef = ref;
    } catch (error) {
      if (run.outcome || run.profile.runtimeCheckpoint === "required") throw error;
      const staged = stageError(error, stage, run.secrets());
      run.log.warn("runtime_checkpoint.skipped", {
        stage,
        code: staged.code,
        message: staged.message,
      });
    }
  },
};
