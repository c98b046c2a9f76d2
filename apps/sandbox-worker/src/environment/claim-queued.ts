import type { ClaimSummary } from "../bindings.js";
import type { WorkerContext } from "../config.js";
import { createConsoleLogger } from "../logger.js";
import { createManagedAgentsClient } from "./client.js";
import { createClaimedWorkStore } from "./claimed-store.js";

/**
 * One non-blocking pass over the environment's queue (a webhook's `waitUntil`, or the cron fallback):
 * the SDK's WorkPoller claims (polls and acks) each queued item, which is handed to the Durable Object
 * named by its work id. Claims stop when `ENVIRONMENT_MAX_CLAIMS` items run at once; the triggers run
 * their passes through the `ClaimCoordinator`, one at a time, so that bound holds across triggers. The
 * Work API hands a queued item to one poller only, so no two passes claim one item; a replay of an item
 * reaches the same object, which runs it once.
 */
export async function claimQueuedWork(
  context: WorkerContext,
  signal?: AbortSignal,
): Promise<ClaimSummary> {
  const config = context.config();
  const settings = context.environment();
  const { DB, ENVIRONMENT_RUNNER } = context.bindings;
  const logger = createConsoleLogger(config.logLevel);
  const store = createClaimedWorkStore(DB);
  const budget = settings.maxClaimsPerPass - (await store.running());
  let claimed = 0;
  let duplicates = 0;
  if (budget > 0) {
    const poller = createManagedAgentsClient(settings).beta.environments.work.poller({
      environmentId: config.environmentId,
      environmentKey: settings.environmentKey,
      autoStop: false,
      drain: true,
      blockMs: null,
      ...(signal ? { signal } : {}),
    });
    for await (const work of poller) {
      claimed += 1;
      const answer = await ENVIRONMENT_RUNNER.get(ENVIRONMENT_RUNNER.idFromName(work.id)).claim(
        work,
      );
      if (answer === "already_running") duplicates += 1;
      if (claimed >= budget) break;
    }
  }
  const saturated = budget <= 0 || claimed >= budget;
  logger.info("environment.claim_pass", { claimed, duplicates, budget, saturated });
  return { claimed, duplicates, saturated };
}
