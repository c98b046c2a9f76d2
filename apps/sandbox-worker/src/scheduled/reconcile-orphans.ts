import { createCloudflareManagedRuntime } from "@open-managed-agents/managed-runtime-cloudflare";
import {
  type OrphanReconcileSummary,
  createDriverSalvage,
  createManagedRuntimeOrphanReconciler,
  resolveManagedRuntimePlan,
} from "@open-managed-agents/managed-runtime-host";
import type { ManagedRuntimeProfile } from "@open-managed-agents/runtime-resource-contract";
import type { WorkerContext } from "../config.js";
import { createConsoleLogger } from "../logger.js";
import { cloudflareDriverOptions } from "../runtime/driver-options.js";
import { runtimeStores } from "../runtime/stores.js";

/** Reaping runs no harness: this profile only lets the driver build its sandbox port. */
const REAP_PROFILE: ManagedRuntimeProfile = {
  workspace: { requirement: "ephemeral" },
  outputs: { requirement: "disabled" },
  runtimeCheckpoint: "disabled",
  driver: { type: "ama_worker", process: { command: "sh" } },
};

/**
 * One reconciler pass (the cron trigger): reaps up to `ORPHAN_REAP_LIMIT` due orphans (containers whose
 * terminate failed) and journaled containers whose run no longer holds the session's fence (a Worker that
 * died mid-run), from their serialized leases alone; a journaled container whose ama_worker run's Worker died
 * mid-turn is salvaged first (docs/host.md, "Salvage"). Logs and returns the summary.
 */
export async function reconcileOrphans(
  context: WorkerContext,
  signal?: AbortSignal,
): Promise<OrphanReconcileSummary> {
  const config = context.config();
  const { bindings } = context;
  const driver = createCloudflareManagedRuntime(
    bindings,
    cloudflareDriverOptions(bindings, config),
  );
  const { sandbox } = await driver.create({
    environmentId: "orphan-reaper",
    placement: "in_process",
    profile: REAP_PROFILE,
    plan: resolveManagedRuntimePlan(REAP_PROFILE, driver.descriptor().capabilities),
    providerConfig: {},
  });
  const { orphans, journal, fences } = runtimeStores(bindings.DB);
  const logger = createConsoleLogger(config.logLevel);
  // A container whose Worker died mid-turn while its AMA worker went on is checkpointed and published first.
  const salvage = createDriverSalvage({
    driver,
    placement: "in_process",
    environmentId: "orphan-reaper",
  });
  const reconciler = createManagedRuntimeOrphanReconciler({
    orphans,
    journal,
    fences,
    sandbox,
    salvage,
    ownerId: "sample-worker-reconciler",
    onSalvage: (record, outcome) =>
      logger[outcome.type === "failed" ? "warn" : "info"]("orphans.salvage", {
        sessionId: record.scope.sessionId,
        runtimeId: record.sandbox.runtimeId,
        outcome: outcome.type,
        ...(outcome.type === "salvaged" ? { revision: outcome.revision } : {}),
        ...(outcome.type === "failed" ? { message: outcome.message } : {}),
      }),
  });
  const { journal: journaled, ...summary } = await reconciler.runOnce({
    limit: config.orphanReapLimit,
    ...(signal ? { signal } : {}),
  });
  const journalFields = journaled
    ? Object.fromEntries(Object.entries(journaled).map(([key, value]) => [`journal_${key}`, value]))
    : {};
  logger.info("orphans.reconciled", { ...summary, ...journalFields });
  return { ...summary, ...(journaled ? { journal: journaled } : {}) };
}
