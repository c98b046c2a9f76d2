import {
  parseRecord,
  workspaceBindingSchema,
} from "@open-managed-agents/runtime-resource-contract";
import { callPort, idempotencyKey } from "./port-call.js";
import type { RunStep } from "./step.js";

const stage = "workspace-materialize";

/** Prepares the workspace from the session's active checkpoint (null on the first run). */
export const materializeWorkspace: RunStep = {
  stage,
  applies: () => true,
  async run(run) {
    const fence = run.requireFence();
    const binding = await callPort(run, stage, (signal) =>
      run.options.workspace.materialize({
        scope: run.scope,
        fence,
        strategy: run.requireAdmission().plan.workspaceStrategy,
        activeCheckpoint: run.publication?.workspaceCandidate ?? null,
        idempotencyKey: idempotencyKey(run, stage),
        signal,
      }),
    );
    run.workspaceBinding = binding;
    parseRecord(workspaceBindingSchema, binding, { record: "workspace binding" });
  },
};
