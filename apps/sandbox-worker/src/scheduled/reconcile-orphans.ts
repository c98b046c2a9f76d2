import { createCloudflareManagedRuntime } from "@open-managed-agents/managed-runtime-cloudflare";
import { type OrphanReconcileSummary, createManagedRuntimeOrphanReconciler } from "@open-managed-agents/managed-runtime-host";
import { readConfig } from "../config.js";
import { createConsoleLogger } from "../logger.js";
import type { WorkerEnv } from "../env.js";
import { cloudflareDriverOptions } from "../runtime/driver-options.js";
import { runtimeStores } from "../runtime/stores.js";

/**
 * One reconciler pass (the cron trigger): reaps up to `ORPHAN_REAP_LIMIT` due orphans, the containers
 * whose terminate failed, from their serialized leases alone. Logs and returns the summary.
 */
export async function reconcileOrphans(env: WorkerEnv, signal?: AbortSignal): Promise<OrphanReconcileSummary> {
  const config = readConfig(env);
  // Reaping needs no profile: the probe command only completes the driver's options.
  const { sandbox } = createCloudflareManagedRuntime(env, { ...cloudflareDriverOptions(env, config), readiness: { command: "sh" } });
  const reconciler = createManagedRuntimeOrphanReconciler({ orphans: runtimeStores(env).orphans, sandbox });
  const summary = await reconciler.runOnce({ limit: config.orphanReapLimit, ...(signal ? { signal } : {}) });
  createConsoleLogger(config.logLevel).info("orphans.reconciled", { ...summary });
  return summary;
}
