import { DurableObject } from "cloudflare:workers";
import type { WorkRunnerRpc } from "../bindings.js";
import { workerContext } from "../config.js";
import type { WorkerEnv } from "../env.js";
import { runWorkItem } from "./run-work-item.js";
import type { WorkItem } from "./work-item.js";
import type { WorkOutcome } from "./work-outcome.js";
import { createWorkStore } from "./work-store.js";

const ITEM_KEY = "item";
const OUTCOME_KEY = "outcome";

/** The runner's Durable Object name for a work item. Ids cannot contain "/", so names never collide. */
export function workRunnerName(sessionId: string, workId: string): string {
  return `${sessionId}/${workId}`;
}

/**
 * Owns one work item's run. `start` persists the item and sets an alarm; the alarm handler runs the
 * fenced transaction, so the run outlives the HTTP request that started it. The outcome is kept in the
 * object's storage until D1 has it: a retried alarm writes it again instead of running the item twice.
 */
export class WorkRunner extends DurableObject<WorkerEnv> implements WorkRunnerRpc {
  /** Queues the run. Calling it again for the same item is harmless. */
  async start(item: WorkItem): Promise<void> {
    await this.ctx.storage.put(ITEM_KEY, item);
    await this.ctx.storage.setAlarm(Date.now());
  }

  override async alarm(): Promise<void> {
    const item = await this.ctx.storage.get<WorkItem>(ITEM_KEY);
    if (item === undefined) return;
    const context = workerContext(this.env);
    const store = createWorkStore(context.bindings.DB);
    let outcome = await this.ctx.storage.get<WorkOutcome>(OUTCOME_KEY);
    if (outcome === undefined) {
      if (!(await store.start(item.sessionId, item.workId))) {
        await this.ctx.storage.deleteAll();
        return;
      }
      outcome = await runWorkItem(context, item, {
        ownerId: `work-runner-${this.ctx.id.toString()}`,
        observeRuntime: (runtimeId) => store.recordRuntime(item.sessionId, item.workId, runtimeId),
      });
      await this.ctx.storage.put(OUTCOME_KEY, outcome);
    }
    await store.finish(item.sessionId, item.workId, outcome);
    await this.ctx.storage.deleteAll();
  }
}
