import type { RunContext } from "../host/run-context.js";
import { memoryStoresMounted } from "./mount-memory-stores.js";
import { callPort } from "./port-call.js";
import type { RunStep } from "./step.js";

/**
 * Writes `file_sync` memory stores back before a checkpoint is taken and published (and before a retained
 * runtime is suspended). Conflicts are logged by path and reason and leave both sides as they are;
 * a failed synchronisation fails the run, so nothing is published past unsaved memory.
 */
export async function synchronizeMemoryStores(run: RunContext, label: string): Promise<void> {
  const port = run.options.memoryStores;
  const lease = run.lease;
  if (port?.mode !== "file_sync" || !lease || !memoryStoresMounted(run)) return;
  const stage = `memory-stores-synchronize-${label}`;
  const fence = run.requireFence();
  const report = await callPort(run, stage, (signal) =>
    port.synchronize({ scope: run.scope, fence, sandbox: lease, signal }),
  );
  const { created, updated, deleted, readOnlyChanges, conflicts } = report;
  run.log.info("memory_stores.synchronized", {
    ...run.scope,
    label,
    created,
    updated,
    deleted,
    readOnlyChanges,
    conflicts: conflicts.length,
  });
  for (const conflict of conflicts)
    run.log.warn("memory_stores.conflict", {
      ...run.scope,
      storeId: conflict.storeId,
      path: conflict.path,
      reason: conflict.reason,
    });
}

/** The final write-back, after the harness and before the workspace checkpoint. */
export const synchronizeMemoryStoresFinal: RunStep = {
  stage: "memory-stores-synchronize-final",
  applies: (run) => memoryStoresMounted(run) && run.options.memoryStores?.mode === "file_sync",
  run: (run) => synchronizeMemoryStores(run, "final"),
};
