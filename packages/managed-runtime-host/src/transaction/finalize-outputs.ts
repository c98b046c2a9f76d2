import {
  type SessionOutputManifestCandidate,
  parseSessionOutputManifestCandidate,
} from "@open-managed-agents/runtime-resource-contract";
import type { RunContext } from "../host/run-context.js";
import { callPort, idempotencyKey } from "./port-call.js";
import type { RunStep } from "./step.js";

/** Collects the output files and stores their manifest, when outputs are bound. */
export const finalizeOutputs: RunStep = {
  stage: "outputs-collect",
  applies: (run) => run.outputBinding !== null,
  async run(run) {
    run.outputCandidate = await collectAndFinalizeOutputs(run, "");
  },
};

/** Collect then finalize under stages `outputs-collect<suffix>` / `outputs-finalize<suffix>`; null without outputs. */
export async function collectAndFinalizeOutputs(
  run: RunContext,
  suffix: string,
): Promise<SessionOutputManifestCandidate | null> {
  const { outputBinding: binding, lease } = run;
  const strategy = run.requireAdmission().plan.outputStrategy;
  if (!binding || !lease || strategy === null) return null;
  const fence = run.requireFence();
  const entries = await callPort(run, `outputs-collect${suffix}`, (signal) =>
    run.options.outputs.collect({
      scope: run.scope,
      fence,
      strategy,
      binding,
      sandbox: lease,
      signal,
    }),
  );
  const finalizeStage = `outputs-finalize${suffix}`;
  const manifest = await callPort(run, finalizeStage, (signal) =>
    run.options.outputs.finalize({
      scope: run.scope,
      fence,
      binding,
      sandbox: lease,
      entries,
      idempotencyKey: idempotencyKey(run, finalizeStage),
      signal,
    }),
  );
  return parseSessionOutputManifestCandidate(manifest);
}
