import {
  InternalError,
  type ManagedRuntimeError,
  parseRecord,
  runtimeResourceFenceSchema,
} from "@open-managed-agents/runtime-resource-contract";
import { markHostError, stageError } from "../errors.js";
import { CLEANUP_ORDER, TRANSACTION_ORDER } from "../transaction/order.js";
import { callPort } from "../transaction/port-call.js";
import type { RunStep } from "../transaction/step.js";
import { admit } from "./admission.js";
import { startMonitor } from "./monitor.js";
import type { RunContext } from "./run-context.js";
import type { ManagedRuntimeRunResult } from "./types.js";

/** Admission, fence, transaction, cleanup, result: one run from start to end. */
export async function executeRun(run: RunContext): Promise<ManagedRuntimeRunResult> {
  const { scope } = run;
  run.log.info("run.started", { ...scope, ownerId: run.options.ownerId });
  try {
    run.admission = await admit(run);
  } catch (error) {
    run.fail(stageError(error, "admission", run.secrets()));
    return finish(run);
  }

  const conflict = await acquireFence(run);
  if (conflict) return conflict;

  startMonitor(run);
  await runSteps(run, TRANSACTION_ORDER, true);
  await cleanup(run);
  return finish(run);
}

/** Takes the fence; returns a `conflict` result when another owner holds it. */
async function acquireFence(run: RunContext): Promise<ManagedRuntimeRunResult | null> {
  const { fences, ownerId, leaseTtlMs } = run.options;
  const pending = Promise.resolve().then(() =>
    fences.acquire({ scope: run.scope, ownerId, ttlMs: leaseTtlMs }),
  );
  let result;
  try {
    result = await callPort(run, "fence-acquire", () => pending, { unsignalled: true });
  } catch (error) {
    // The store may still grant the fence after the run gave up; hand it straight back.
    pending
      .then((late) =>
        late.type === "acquired"
          ? fences.release({ fence: late.fence, reason: "failed" })
          : undefined,
      )
      .catch(() => undefined);
    run.fail(stageError(error, "fence-acquire", run.secrets()));
    return finish(run);
  }
  if (result.type === "conflict") {
    run.log.info("fence.conflict", { ...run.scope, expiresAt: result.expiresAt });
    run.dispose();
    return { type: "conflict", expiresAt: result.expiresAt };
  }
  run.setFence(result.fence);
  run.publication = result.publication;
  try {
    parseRecord(runtimeResourceFenceSchema, result.fence, { record: "fence", code: "internal" });
  } catch (error) {
    run.fail(stageError(error, "fence-acquire", run.secrets()));
    await cleanup(run);
    return finish(run);
  }
  run.log.info("fence.acquired", {
    ...run.scope,
    generation: result.fence.generation,
    expiresAt: result.fence.expiresAt,
  });
  return null;
}

/** Runs the applicable steps in order. Transaction steps stop at the first failure; cleanup steps all run. */
async function runSteps(
  run: RunContext,
  steps: readonly RunStep[],
  stopOnFailure: boolean,
): Promise<void> {
  for (const step of steps) {
    try {
      if (!step.applies(run)) continue;
      await step.run(run);
    } catch (error) {
      const typed = run.outcome?.error ?? stageError(error, step.stage, run.secrets());
      if (stopOnFailure) {
        run.fail(typed);
        return;
      }
      run.cleanupErrors.push(typed);
    }
  }
}

/** Stops the background loops, waits for them, then runs every cleanup step. */
async function cleanup(run: RunContext): Promise<void> {
  run.stopBackground();
  await Promise.allSettled(run.background);
  await runSteps(run, CLEANUP_ORDER, false);
}

function finish(run: RunContext): ManagedRuntimeRunResult {
  run.dispose();
  const cleanupErrors: readonly ManagedRuntimeError[] = [...run.cleanupErrors];
  let result: Exclude<ManagedRuntimeRunResult, { type: "conflict" }>;
  if (run.finalPublish) {
    const { revision, generation, published } = run.finalPublish;
    result = { type: "completed", revision, generation, published, cleanupErrors };
  } else if (run.outcome?.type === "lease_lost") {
    result = { type: "lease_lost", error: run.outcome.error, cleanupErrors };
  } else {
    const error =
      run.outcome?.error ??
      markHostError(new InternalError({ message: "the transaction ended without publishing" }));
    result = { type: "failed", error, cleanupErrors };
  }
  const fields = { ...run.scope, result: result.type, cleanupErrors: cleanupErrors.length };
  if (result.type === "completed") run.log.info("run.finished", fields);
  else
    run.log.warn("run.finished", {
      ...fields,
      code: result.error.code,
      message: result.error.message,
    });
  return result;
}
