import type { ManagedSandboxLease, SandboxJournalBinding } from "@open-managed-agents/runtime-resource-contract";
import { withDeadline } from "../abort.js";
import { stageError } from "../errors.js";
import type { RunContext } from "../host/run-context.js";
import { checkLease, sameRuntime } from "./check-lease.js";

/**
 * The binding a driver receives with acquire or restore: each call journals the lease-to-be under the
 * run's fence generation before the driver starts compute. Undefined when the host has no journal.
 */
export function journalBinding(run: RunContext, stage: string): SandboxJournalBinding | undefined {
  if (!run.options.journal) return undefined;
  return { record: (lease) => journalLease(run, lease, stage) };
}

/**
 * Writes the journal record of `lease` once per run (token-free: provider, runtime id and scalar metadata),
 * bounded by `callTimeoutMs` and the run's signal. A failure rejects, so the driver does not start compute.
 */
export async function journalLease(run: RunContext, lease: ManagedSandboxLease, stage: string): Promise<void> {
  const journal = run.options.journal;
  if (!journal) return;
  checkLease(run, lease, stage);
  if (run.journaled.some((entry) => sameRuntime(entry.sandbox, lease))) return;
  // A run that already ended (lease lost, failed) starts nothing more: the driver gets its error instead.
  if (run.outcome) throw run.outcome.error;
  const fence = run.requireFence();
  const sandbox: ManagedSandboxLease = { provider: lease.provider, runtimeId: lease.runtimeId, ...(lease.metadata ? { metadata: lease.metadata } : {}) };
  const journalStage = `${stage}-journal`;
  let id: string;
  try {
    ({ id } = await withDeadline(
      run.options.scheduler,
      run.options.callTimeoutMs,
      journalStage,
      () => journal.record({
        scope: run.scope,
        generation: fence.generation,
        ownerId: run.options.ownerId,
        sandbox,
        // The revision the run's workspace came from: the reconciler salvages only while nothing newer exists.
        startRevision: run.publication?.revision ?? 0,
      }),
      run.signal,
    ));
  } catch (error) {
    throw stageError(error, journalStage, run.secrets());
  }
  run.journaled.push({ id, sandbox });
  run.log.info("sandbox.journaled", { provider: sandbox.provider, runtimeId: sandbox.runtimeId, generation: fence.generation });
}

/** Journals a lease the driver returned without having journaled it first (a driver that ignores the binding). */
export async function journalReturnedLease(run: RunContext, lease: ManagedSandboxLease, stage: string): Promise<void> {
  if (!run.options.journal || run.journaled.some((entry) => sameRuntime(entry.sandbox, lease))) return;
  run.log.warn("sandbox.journaled_late", { provider: lease.provider, runtimeId: lease.runtimeId, stage });
  await journalLease(run, lease, stage);
}
