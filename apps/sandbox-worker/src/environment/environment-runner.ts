import type { BetaSelfHostedWork } from "@anthropic-ai/sdk/resources/beta/environments/work";
import { DurableObject } from "cloudflare:workers";
import type { ClaimAnswer, EnvironmentRunnerRpc } from "../bindings.js";
import { workerContext } from "../config.js";
import type { WorkerEnv } from "../env.js";
import { errorJSON } from "../work/work-outcome.js";
import { announceSlotFreed } from "./claim-coordinator.js";
import { claimedOutcomeOf } from "./claimed-outcome.js";
import { createClaimedWorkStore } from "./claimed-store.js";
import {
  type ClaimedItemRef,
  claimedItemRef,
  createClaimedItemWorker,
} from "./environment-worker.js";

const REF_KEY = "claimed";
/** Period of the keep-alive alarm while a run is under way. */
export const KEEP_ALIVE_MS = 20_000;

/**
 * Runs one claimed work item, addressed by its work id (a replay of the item reaches this same object).
 * The run lives in memory, with the item's secret; storage holds only the work and session ids, so a
 * secret is never persisted. An alarm fires every {@link KEEP_ALIVE_MS} while the run is under way, which
 * keeps the object alive for as long as the run needs; an alarm that finds ids in storage but no run in
 * memory means the object restarted, and the item is recorded `interrupted` and left to be reclaimed.
 * When the run ends, the object tells the `ClaimCoordinator` that a slot is free.
 */
export class EnvironmentRunner extends DurableObject<WorkerEnv> implements EnvironmentRunnerRpc {
  #run: Promise<void> | null = null;

  /** Starts the item's run, unless this object is running it already (a duplicate trigger). */
  async claim(work: BetaSelfHostedWork): Promise<ClaimAnswer> {
    if (this.#run !== null) return "already_running";
    const ref = claimedItemRef(work);
    const store = createClaimedWorkStore(workerContext(this.env).bindings.DB);
    if (!(await store.begin(ref.workId, ref.sessionId))) return "already_running";
    await this.ctx.storage.put(REF_KEY, ref);
    await this.ctx.storage.setAlarm(Date.now() + KEEP_ALIVE_MS);
    this.#run = this.#execute(work, ref).finally(() => {
      this.#run = null;
    });
    return "started";
  }

  override async alarm(): Promise<void> {
    if (this.#run !== null) {
      await this.ctx.storage.setAlarm(Date.now() + KEEP_ALIVE_MS);
      return;
    }
    const ref = await this.ctx.storage.get<ClaimedItemRef>(REF_KEY);
    if (ref !== undefined)
      await createClaimedWorkStore(workerContext(this.env).bindings.DB).finish(ref.workId, {
        type: "interrupted",
      });
    await this.ctx.storage.deleteAll();
  }

  async #execute(work: BetaSelfHostedWork, ref: ClaimedItemRef): Promise<void> {
    const context = workerContext(this.env);
    const store = createClaimedWorkStore(context.bindings.DB);
    try {
      const worker = createClaimedItemWorker(context, {
        ownerId: `environment-runner-${this.ctx.id.toString()}`,
        observeRuntime: (runtimeId) => store.recordRuntime(ref.workId, runtimeId),
      });
      await store.finish(ref.workId, claimedOutcomeOf(await worker.handleClaimed(work)));
    } catch (error) {
      // Settings the Worker cannot run with: nothing was started; the lapsed lease queues the item again.
      await store.finish(ref.workId, { type: "rejected", error: errorJSON(error) });
    } finally {
      await this.ctx.storage.deleteAlarm();
      await this.ctx.storage.deleteAll();
    }
    // The item's slot is free: an item left queued for want of one is claimed now, not at the next cron.
    await announceSlotFreed(context);
  }
}
