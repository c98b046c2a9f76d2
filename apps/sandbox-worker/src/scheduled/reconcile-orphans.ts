import { createCloudflareManagedRuntime } from "@open-managed-agents/managed-runtime-cloudflare";
import { type OrphanReconcileSummary, createManagedRuntimeOrphanReconciler } from "@open-managed-agents/managed-runtime-host";
import { readConfig } from "../config.js";
import { createConsoleLogger } from "../logger.js";
import type { WorkerEnv } from "../env.js";
import { cloudflareDriverOptions } from "../runtime/driver-options.js";
import { runtimeStores } from "../runtime/stores.js";

/**
 * One reconciler pass (the cron trigger): reaps up to `ORPHAN_REAP_LIMIT` due orphans (containers whose
 * terminate failed) and journaled containers whose fence generation is no longer current (a Worker that
 * died mid-run), from their serialized leases alone. Logs and returns the summary.
 */
export async function reconcileOrphans(env: WorkerEnv, signal?: AbortSignal): Promise<OrphanReconcileSummary> {
  const config = readConfig(env);
  // Reaping needs no profile: the probe command only completes the driver's options.
  const { sandbox } = createCloudflareManagedRuntime(env, { ...cloudflareDriverOptions(env, config), readiness: { command: "sh" } });
  const { orphans, journal, fences } = runtimeStores(env);
  const reconciler = createManagedRuntimeOrphanReconciler({ orphans, journal, fences, sandbox });
  const { journal: journaled, ...summary } = await reconciler.runOnce({ limit: config.orphanReapLimit, ...(signal ? { signal } : {}) });
  const journalFields = journaled ? Object.fromEntries(Object.entries(journaled).map(([key, value]) => [`journal_${key}`, value])) : {};
  createConsoleLogger(config.logLevel).info("orphans.reconciled", { ...summary, ...journalFields });
  return { ...summary, ...(journaled ? { journal: journaled } : {}) };
}
