import {
  InternalError,
  type RuntimeCheckpointRef,
  type RuntimePublicationCandidate,
  jitteredBackoffMs,
  parseRecord,
  runtimeResourceFenceSchema,
} from "@open-managed-agents/runtime-resource-contract";
import { isBusyStore, markHostError } from "../errors.js";
import type { RunContext } from "../host/run-context.js";
import { callPort } from "./port-call.js";
import type { RunStep } from "./step.js";

/** Candidates one publish activates. */
export interface PublishCandidates {
  readonly workspaceCandidate: RuntimePublicationCandidate;
  readonly outputCandidate: RuntimePublicationCandidate | null;
  readonly runtimeCheckpoint: RuntimeCheckpointRef | null;
}

/** Activates the final candidates under the fence; success makes the run `completed`. */
export const publishFinal: RunStep = {
  stage: "fence-publish",
  applies: () => true,
  async run(run) {
    const workspaceCandidate = run.workspaceCandidate;
    if (!workspaceCandidate)
      throw markHostError(
        new InternalError({ message: "nothing to publish", context: { stage: "fence-publish" } }),
      );
    const generation = run.requireFence().generation;
    const revision = await publishUnderFence(run, "fence-publish", {
      workspaceCandidate,
      outputCandidate: run.outputCandidate,
      runtimeCheckpoint: run.runtimeCheckpointRef,
    });
    const output = run.outputCandidate;
    run.finalPublish = {
      revision,
      generation,
      published: {
        workspaceCheckpoint: {
          id: workspaceCandidate.id,
          contentHash: workspaceCandidate.contentHash,
        },
        outputManifest: output
          ? { id: output.id, contentHash: output.contentHash, entries: output.entries }
          : null,
      },
    };
    if (run.requireAdmission().plan.workspaceStrategy === "retained_runtime") run.retained = true;
    run.log.info("fence.published", { revision, generation, retained: run.retained });
  },
};

/**
 * Publishes once under the current fence. Refuses to call the port when the run already lost its
 * lease, when the host's own clock says the fence expired, or when this generation already published;
 * a `lost` answer loses the lease. Returns the new revision. With `salvageOf`, publishes a dead run's
 * workspace (`publishIfLatest`, only while the session is still at that revision), none of this run's outputs.
 */
export async function publishUnderFence(
  run: RunContext,
  stage: string,
  candidates: PublishCandidates,
  salvageOf?: { readonly expectedRevision: number },
): Promise<number> {
  if (run.outcome) throw run.outcome.error;
  const fence = run.requireFence();
  if (run.publishedGenerations.has(fence.generation)) {
    throw markHostError(
      new InternalError({
        message: `generation ${fence.generation} already published`,
        context: { stage },
      }),
    );
  }
  if (run.options.clock.now() >= Date.parse(fence.expiresAt))
    throw run.loseLease("fence_expired", { stage });
  run.publishedGenerations.add(fence.generation);
  // Whether this run's own outputs were (or may have been) published decides release or abort in cleanup.
  const own = salvageOf === undefined;
  if (own) run.publishUncertain = true;
  const { fences } = run.options;
  const publish = () =>
    callPort(
      run,
      stage,
      () =>
        own
          ? fences.publish({ fence, ...candidates })
          : fences.publishIfLatest({ fence, ...candidates, ...salvageOf }),
      { unsignalled: true },
    );
  const result = await whileStoreBusy(run, stage, Date.parse(fence.expiresAt), publish);
  if (own) run.publishUncertain = false;
  if (result.type === "lost") throw run.loseLease("publish_refused", { stage });
  if (own) run.anyPublished = true;
  return result.revision;
}

/** First wait before a busy store is asked again; it doubles up to {@link BUSY_RETRY_MAX_MS}. */
const BUSY_RETRY_BASE_MS = 100;
const BUSY_RETRY_MAX_MS = 2_000;

/**
 * Makes `call` again while the store answers busy (locked by another connection, nothing written) and the
 * fence has not expired by the host's clock, backing off: the run's finished work is not given up for a
 * lock another process holds for a while. Any other failure, a lost lease or the fence's expiry ends it.
 */
async function whileStoreBusy<T>(
  run: RunContext,
  stage: string,
  expiresAt: number,
  call: () => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const delayMs = jitteredBackoffMs({
        attempt: attempt - 1,
        baseMs: BUSY_RETRY_BASE_MS,
        maxMs: BUSY_RETRY_MAX_MS,
        jitter: 0,
      });
      if (!isBusyStore(error) || run.outcome || run.options.clock.now() + delayMs >= expiresAt)
        throw error;
      run.log.warn("store.busy_retry", { stage, attempt, delayMs });
      // A sleep cut short by the run's end is no failure of its own: the next call throws the run's outcome.
      await run.options.scheduler.sleep(delayMs, run.signal).catch(() => undefined);
    }
  }
}

/**
 * Moves to the next generation after a live checkpoint published, so the next publish (another live
 * checkpoint or the final one) happens under a generation that has not published yet. The fence is
 * still held by this owner, so nobody else can take it in between; any other answer loses the lease.
 */
export async function rotateFence(run: RunContext, stage: string): Promise<void> {
  const previous = run.requireFence();
  const result = await callPort(
    run,
    stage,
    () =>
      run.options.fences.acquire({
        scope: run.scope,
        ownerId: run.options.ownerId,
        ttlMs: run.options.leaseTtlMs,
      }),
    { unsignalled: true },
  );
  if (result.type !== "acquired") throw run.loseLease("fence_rotation_failed", { stage });
  const next = parseRecord(runtimeResourceFenceSchema, result.fence, {
    record: "fence",
    code: "internal",
  });
  run.setFence(next);
  if (next.generation <= previous.generation)
    throw run.loseLease("fence_rotation_failed", { stage });
  run.log.info("fence.rotated", {
    stage,
    generation: next.generation,
    previousGeneration: previous.generation,
  });
}
