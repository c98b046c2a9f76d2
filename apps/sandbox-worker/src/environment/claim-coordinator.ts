import { DurableObject } from "cloudflare:workers";
import type { ClaimCoordinatorRpc, ClaimSummary, WorkerBindings } from "../bindings.js";
import { type WorkerContext, workerContext } from "../config.js";
import type { WorkerEnv } from "../env.js";
import { createConsoleLogger } from "../logger.js";
import { claimQueuedWork } from "./claim-queued.js";

/** The one coordinator object every trigger reaches. */
export const CLAIM_COORDINATOR_NAME = "environment-queue";

/**
 * Runs the Worker's claim passes one at a time, so `ENVIRONMENT_MAX_CLAIMS` bounds the items running at
 * once however many triggers arrive together: each pass computes its budget with no other pass under way.
 * A trigger that arrives during a pass joins it and asks for one more pass after it (the queue may have
 * grown meanwhile). When a pass stopped at the budget, the next item to end hands its slot on with
 * {@link ClaimCoordinator.slotFreed}, so queued items do not wait for the next cron trigger.
 */
export class ClaimCoordinator extends DurableObject<WorkerEnv> implements ClaimCoordinatorRpc {
  #pass: Promise<ClaimSummary> | null = null;
  #again = false;
  // In memory only: after an eviction the next cron trigger claims what is left.
  #saturated = false;

  /** Runs a claim pass, or joins the pass under way and schedules one more after it. */
  async drain(): Promise<ClaimSummary> {
    if (this.#pass !== null) {
      this.#again = true;
      return this.#pass;
    }
    this.#pass = this.#passes().finally(() => {
      this.#pass = null;
    });
    return this.#pass;
  }

  /** A claimed item ended: claims again when the last pass left items queued for want of a slot. */
  async slotFreed(): Promise<ClaimSummary | null> {
    if (!this.#saturated && this.#pass === null) return null;
    return this.drain();
  }

  async #passes(): Promise<ClaimSummary> {
    let claimed = 0;
    let duplicates = 0;
    let summary: ClaimSummary;
    do {
      this.#again = false;
      try {
        summary = await claimQueuedWork(workerContext(this.env));
      } catch (error) {
        this.#saturated = false;
        throw error;
      }
      claimed += summary.claimed;
      duplicates += summary.duplicates;
      this.#saturated = summary.saturated;
    } while (this.#again);
    return { claimed, duplicates, saturated: summary.saturated };
  }
}

/** Asks the coordinator for a claim pass (a webhook or the cron trigger). */
export function requestClaimPass(bindings: WorkerBindings): Promise<ClaimSummary> {
  return coordinator(bindings).drain();
}

/** Tells the coordinator that a claimed item ended; never rejects (the cron trigger claims what is left). */
export async function announceSlotFreed(context: WorkerContext): Promise<void> {
  try {
    await coordinator(context.bindings).slotFreed();
  } catch (error) {
    createConsoleLogger(context.config().logLevel).error("environment.claim_failed", {
      message: error instanceof Error ? error.message : String(error),
    });
  }
}

function coordinator({
  CLAIM_COORDINATOR,
}: WorkerBindings): DurableObjectStub<ClaimCoordinatorRpc> {
  return CLAIM_COORDINATOR.get(CLAIM_COORDINATOR.idFromName(CLAIM_COORDINATOR_NAME));
}
