import type { WorkerContext } from "../config.js";
import { requestClaimPass } from "../environment/claim-coordinator.js";
import { createConsoleLogger } from "../logger.js";
import { reconcileOrphans } from "./reconcile-orphans.js";

/**
 * The cron trigger: reaps orphans, and polls the environment's queue as the fallback for a lost webhook
 * (only when `ENVIRONMENT_KEY` is set: a Worker serving the bearer API alone polls nothing). One failing
 * half never stops the other.
 */
export async function runScheduled(context: WorkerContext): Promise<void> {
  const logger = createConsoleLogger(context.config().logLevel);
  const claiming = context.claimsWork ? requestClaimPass(context.bindings) : Promise.resolve(null);
  const [reaped, claimed] = await Promise.allSettled([reconcileOrphans(context), claiming]);
  for (const [task, result] of [
    ["reconcile", reaped],
    ["claim", claimed],
  ] as const) {
    if (result.status === "rejected")
      logger.error("scheduled.failed", {
        task,
        message: result.reason instanceof Error ? result.reason.message : String(result.reason),
      });
  }
}
