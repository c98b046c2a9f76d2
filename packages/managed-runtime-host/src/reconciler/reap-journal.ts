import type {
  RuntimeResourceFencePort,
  SandboxJournalPort,
  SandboxJournalRecord,
} from "@open-managed-agents/runtime-resource-contract";
import { MAX_ORPHAN_LIST_LIMIT } from "../stores/orphan-inputs.js";
import { type ReconcilerSandbox, reapAndConfirm } from "./confirm-gone.js";
import { type SalvageOutcome, type SandboxSalvager, salvageSandbox } from "./salvage-sandbox.js";

/** What one pass did with the sandbox journal. */
export interface JournalReconcileSummary {
  /** Records whose sandbox was reaped, confirmed gone and resolved. */
  readonly reaped: number;
  /** Records whose reap failed or was not confirmed; retried with backoff. */
  readonly failed: number;
  /** Records given up in this pass; they stay listed. */
  readonly givenUp: number;
  /** Records whose run still holds the fence (rotated or not): a live run's sandbox is left alone. */
  readonly held: number;
  /** Records waiting for their backoff delay. */
  readonly deferred: number;
  /** Records given up in an earlier pass, skipped. */
  readonly exhausted: number;
  /** Sandboxes whose workspace was salvaged and published before the reap. */
  readonly salvaged: number;
  /** Salvages that published nothing: something newer was published, or the publish was refused. */
  readonly superseded: number;
  /** Salvages that failed (sandbox gone or unreachable, checkpoint refused): nothing published, reaped all the same. */
  readonly salvageFailed: number;
}

/** Dependencies of {@link reapJournal}. */
export interface JournalReaper {
  readonly journal: SandboxJournalPort;
  readonly fences: Pick<RuntimeResourceFencePort, "isGenerationCurrent">;
  readonly sandbox: ReconcilerSandbox;
  readonly maxAttempts: number;
  /** When a record with `attempts` failures becomes due again (a record never attempted is due at once). */
  readonly dueAt: (record: { readonly attempts: number; readonly updatedAt: string }) => number;
  /** Redacted message of a failure. */
  readonly describe: (error: unknown) => string;
  /** Salvages a sandbox before its first reap attempt, when its record carries a start revision. */
  readonly salvager?: SandboxSalvager;
  /** Reports what a salvage did. */
  readonly onSalvage?: (record: SandboxJournalRecord, outcome: SalvageOutcome) => void;
}

/**
 * Reaps up to `limit` journaled sandboxes, oldest first, whose run no longer holds the fence: it is not
 * held, unexpired, by the record's owner and work item at the record's generation or a later one (expired,
 * released or taken over). A record of a live run, rotated by live checkpoints or not, is never touched.
 * With a salvager, a record that carries a start revision is salvaged first (see {@link salvageSandbox}),
 * once, before its first reap.
 */
export async function reapJournal(
  reaper: JournalReaper,
  input: { readonly limit: number; readonly now: number; readonly signal?: AbortSignal },
): Promise<JournalReconcileSummary> {
  const counts = {
    reaped: 0,
    failed: 0,
    givenUp: 0,
    held: 0,
    deferred: 0,
    exhausted: 0,
    salvaged: 0,
    superseded: 0,
    salvageFailed: 0,
  };
  const records = await reaper.journal.list({
    limit: Math.min(MAX_ORPHAN_LIST_LIMIT, input.limit * 4),
  });
  let handled = 0;
  for (const record of records) {
    if (input.signal?.aborted || handled >= input.limit) break;
    if (record.attempts >= reaper.maxAttempts) {
      counts.exhausted += 1;
      continue;
    }
    if (record.attempts > 0 && reaper.dueAt(record) > input.now) {
      counts.deferred += 1;
      continue;
    }
    // Asked of the fence's holder, not of the recorded generation alone: a live checkpoint rotates the
    // fence of a run that goes on, while its record keeps the generation it was journaled under.
    const { scope, generation, ownerId } = record;
    if (await reaper.fences.isGenerationCurrent({ scope, generation, ownerId })) {
      counts.held += 1;
      continue;
    }
    handled += 1;
    const salvage = await salvageFirst(reaper, record);
    if (salvage === "held") {
      counts.held += 1;
      continue;
    }
    if (salvage) counts[salvage] += 1;
    counts[await reapOne(reaper, record)] += 1;
  }
  return counts;
}

/** The salvage step of a record: skipped unless it has a start revision and was never attempted. */
async function salvageFirst(
  reaper: JournalReaper,
  record: SandboxJournalRecord,
): Promise<"held" | "salvaged" | "superseded" | "salvageFailed" | null> {
  const { salvager } = reaper;
  const startRevision = record.startRevision;
  if (!salvager || startRevision === null || record.attempts > 0) return null;
  let outcome: SalvageOutcome;
  try {
    outcome = await salvageSandbox(salvager, { ...record, startRevision });
  } catch (error) {
    // The fence store failed: nothing was published, and the sandbox is reaped like any other.
    outcome = { type: "failed", message: reaper.describe(error) };
  }
  reaper.onSalvage?.(record, outcome);
  if (outcome.type === "failed") return "salvageFailed";
  if (outcome.type === "refused") return "superseded";
  return outcome.type;
}

async function reapOne(
  reaper: JournalReaper,
  record: SandboxJournalRecord,
): Promise<"reaped" | "failed" | "givenUp"> {
  try {
    await reapAndConfirm(reaper.sandbox, {
      scope: record.scope,
      lease: record.sandbox,
      reason: "lease_lost",
    });
    await reaper.journal.resolve({ id: record.id });
    return "reaped";
  } catch (error) {
    const attempts = record.attempts + 1;
    const message = reaper.describe(error);
    const givenUp = attempts >= reaper.maxAttempts;
    await reaper.journal.failed({
      id: record.id,
      error: givenUp ? `gave up after ${attempts} attempts: ${message}` : message,
    });
    return givenUp ? "givenUp" : "failed";
  }
}
