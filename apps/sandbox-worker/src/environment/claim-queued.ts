import { readConfig } from "../config.js";
import type { WorkerEnv } from "../env.js";
import { createConsoleLogger } from "../logger.js";
import { createManagedAgentsClient } from "./client.js";
import { createClaimedWorkStore } from "./claimed-store.js";
import { readEnvironmentSettings } from "./settings.js";

/** What one claim pass did. */
export interface ClaimSummary {
  /** Items the pass claimed and handed to their Durable Objects. */
  readonly claimed: number;
  /** Of those, items whose object was running them already (a replay). */
  readonly duplicates: number;
  /** The pass stopped at the budget: items may still be queued. */
  readonly saturated: boolean;
}

/**
 * One non-blocking pass over the environment's queue (a webhook's `waitUntil`, or the cron fallback):
 * the SDK's WorkPoller claims (polls and acks) each queued item, which is handed to the Durable Object
 * named by its work id. Claims stop when `ENVIRONMENT_MAX_CLAIMS` items run at once; the triggers run
 * their passes through the `ClaimCoordinator`, one at a time, so that bound holds across triggers. The
 * Work API hands a queued item to one poller only, so no two passes claim one item; a replay of an item
 * reaches the same object, which runs it once.
 */
export async function claimQueuedWork(env: WorkerEnv, signal?: AbortSignal): Promise<ClaimSummary> {
  const config = readConfig(env);
  const settings = readEnvironmentSettings(env);
  const logger = createConsoleLogger(config.logLevel);
  const store = createClaimedWorkStore(env.DB);
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
      const answer = await env.ENVIRONMENT_RUNNER.get(env.ENVIRONMENT_RUNNER.idFromName(work.id)).claim(work);
      if (answer === "already_running") duplicates += 1;
      if (claimed >= budget) break;
    }
  }
  const saturated = budget <= 0 || claimed >= budget;
  logger.info("environment.claim_pass", { claimed, duplicates, budget, saturated });
  return { claimed, duplicates, saturated };
}
