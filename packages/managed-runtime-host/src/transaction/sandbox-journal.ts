import type {
  ManagedSandboxLease,
  SandboxJournalBinding,
} from "@open-managed-agents/runtime-resource-contract";
import { withDeadline } from "../abort.js";
import { stageError } from "../errors.js";
import type { RunContext } from "../host/run-context.js";
import { checkLease, sameRuntime } from "./check-lease.js";
import { callWithDeadline, cleanupCall } from "./port-call.js";

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
export async function journalLease(
  run: RunContext,
  lease: ManagedSandboxLease,
  stage: string,
): Promise<void> {
  const journal = run.options.journal;
  if (!journal) return;
  checkLease(run, lease, stage);
  if (run.journaled.some((entry) => sameRuntime(entry.sandbox, lease))) return;
  // A run that already ended (lease lost, failed) starts nothing more: the driver gets its error instead.
  if (run.outcome) throw run.outcome.error;
  const fence = run.requireFence();
  const sandbox: ManagedSandboxLease = {
    provider: lease.provider,
    runtimeId: lease.runtimeId,
    ...(lease.metadata ? { metadata: lease.metadata } : {}),
  };
  const journalStage = `${stage}-journal`;
  let id: string;
  try {
    ({ id } = await withDeadline(
      run.options.scheduler,
      run.options.callTimeoutMs,
      journalStage,
      () =>
        journal.record({
          scope: run.scope,
          generation: fence.generation,
          ownerId: run.options.ownerId,
          sandbox,
        }),
      run.signal,
    ));
  } catch (error) {
    throw stageError(error, journalStage, run.secrets());
  }
  run.journaled.push({ id, sandbox });
  run.log.info("sandbox.journaled", {
    provider: sandbox.provider,
    runtimeId: sandbox.runtimeId,
    generation: fence.generation,
  });
}

/** Journals a lease the driver returned without having journaled it first (a driver that ignores the binding). */
export async function journalReturnedLease(
  run: RunContext,
  lease: ManagedSandboxLease,
  stage: string,
): Promise<void> {
  if (!run.options.journal || run.journaled.some((entry) => sameRuntime(entry.sandbox, lease)))
    return;
  run.log.warn("sandbox.journaled_late", {
    provider: lease.provider,
    runtimeId: lease.runtimeId,
    stage,
  });
  await journalLease(run, lease, stage);
}

const salvageable = new WeakSet<RunContext>();

/**
 * Before an `ama_worker` harness starts on the verified workspace, sets the lease's journal record to the
 * revision that workspace came from: should this host die mid-turn, the reconciler may salvage the sandbox
 * (the in-sandbox worker goes on, and finishes the turn, without it). Other lanes are never salvaged. A
 * failed write is a warning: the run goes on, and its sandbox would only be reaped.
 */
export async function markSalvageable(
  run: RunContext,
  lease: ManagedSandboxLease,
  stage: string,
): Promise<void> {
  const journal = run.options.journal;
  const entry = run.journaled.find((candidate) => sameRuntime(candidate.sandbox, lease));
  if (!journal || !entry || run.profile.driver.type !== "ama_worker") return;
  const startRevision = run.publication?.revision ?? 0;
  const journalStage = `${stage}-journal-salvage`;
  const call = () => journal.setStartRevision({ id: entry.id, startRevision });
  const settled = await callWithDeadline(
    run,
    journalStage,
    run.options.callTimeoutMs,
    call,
    run.signal,
  );
  if (!settled.ok) {
    run.log.warn("sandbox.salvage_unmarked", {
      stage: journalStage,
      code: settled.error.code,
      message: settled.error.message,
    });
    return;
  }
  salvageable.add(run);
}

/**
 * Clears the salvage mark of a record this live host leaves to the reconciler: the host settled the run
 * itself (published, failed or lost its lease), so the sandbox is only reaped, never salvaged.
 */
export async function unmarkSalvageable(run: RunContext, id: string, stage: string): Promise<void> {
  const journal = run.options.journal;
  if (!journal || !salvageable.has(run)) return;
  await cleanupCall(run, `${stage}-unmark-salvage`, () =>
    journal.setStartRevision({ id, startRevision: null }),
  );
}
