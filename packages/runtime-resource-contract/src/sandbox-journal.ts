import * as z from "zod";
import { nonEmptyString } from "./json.js";
import { runtimeOrphanId } from "./orphan.js";
import { type ManagedSandboxLease, managedSandboxLeaseSchema } from "./sandbox.js";
import { type RuntimeResourceScope, runtimeResourceScopeSchema } from "./scope.js";

/**
 * A sandbox a driver was about to start, written before the provider's create call and removed only once
 * its termination is confirmed. Whatever dies in between (the host, the provider, the store the driver
 * restores from), the record names a runtime the reconciler can reap. It holds no fence token or credential.
 */
export interface SandboxJournalRecord {
  /** {@link sandboxJournalId} of scope, generation and sandbox. */
  readonly id: string;
  readonly scope: RuntimeResourceScope;
  /** Fence generation the sandbox was started under; the reconciler leaves it alone while that generation is current. */
  readonly generation: number;
  /** Host instance that journaled it. */
  readonly ownerId: string;
  /**
   * Revision of the session's publication the run's workspace was restored from (0: nothing published yet),
   * set once its `ama_worker` harness started on the verified workspace, and cleared again when the run's
   * own host settles the run. While set, the next run to take the session's fence, or a reconciler that
   * finds the run's host gone, may salvage the sandbox's workspace, and publishes it only while the session
   * is still at this revision. Null: the
   * sandbox is only reaped (its harness never started, its host settled it, or the record predates the field).
   */
  readonly startRevision: number | null;
  /** The lease-to-be: provider and the runtime id the driver will start (or already minted). */
  readonly sandbox: ManagedSandboxLease;
  /** Reap attempts so far. */
  readonly attempts: number;
  /** Redacted message of the latest failed reap; empty until one fails. */
  readonly lastError: string;
  /** ISO time the record was written (before the sandbox existed). */
  readonly createdAt: string;
  /** ISO time of the latest write or attempt. */
  readonly updatedAt: string;
}

/** Durable write-ahead journal of sandboxes, kept beside the orphan queue. */
export interface SandboxJournalPort {
  /** Writes the record before compute starts. Idempotent by id: a second write keeps the first record. */
  record(input: {
    readonly scope: RuntimeResourceScope;
    readonly generation: number;
    readonly ownerId: string;
    readonly sandbox: ManagedSandboxLease;
  }): Promise<SandboxJournalRecord>;
  /** Sets or clears (null) a record's {@link SandboxJournalRecord.startRevision}. A missing record is a no-op. */
  setStartRevision(input: {
    readonly id: string;
    readonly startRevision: number | null;
  }): Promise<void>;
  /** Unresolved records, oldest first. */
  list(input: { readonly limit: number }): Promise<readonly SandboxJournalRecord[]>;
  /**
   * Unresolved records of `scope`'s session (its workspace, environment and session, any work item), oldest
   * first. A run that takes the session's fence reads it to salvage what a dead run of the session left.
   */
  listSession(input: {
    readonly scope: RuntimeResourceScope;
    readonly limit: number;
  }): Promise<readonly SandboxJournalRecord[]>;
  /** Records a failed (or unconfirmed) reap attempt. */
  failed(input: { readonly id: string; readonly error: string }): Promise<void>;
  /** Removes the record of a sandbox whose termination was confirmed. Idempotent. */
  resolve(input: { readonly id: string }): Promise<void>;
}

/**
 * What the host hands a driver with every acquire and restore. The driver calls `record` with the lease it
 * is about to produce, after it knows the runtime id and before the provider starts compute for it; when
 * `record` rejects, the driver must not start compute and fails with that error.
 */
export interface SandboxJournalBinding {
  /** Journals the lease-to-be (JSON scalars only; never a token). Safe to call again for the same lease. */
  record(sandbox: ManagedSandboxLease): Promise<void>;
}

/** Deterministic journal id: JSON of scope, generation, provider and runtime id (the orphan id of the same lease). */
export function sandboxJournalId(
  scope: RuntimeResourceScope,
  generation: number,
  sandbox: ManagedSandboxLease,
): string {
  return runtimeOrphanId(scope, generation, sandbox);
}

/** Schema for {@link SandboxJournalRecord}. */
export const sandboxJournalRecordSchema = z.object({
  id: nonEmptyString,
  scope: runtimeResourceScopeSchema,
  generation: z.number().int().nonnegative(),
  ownerId: nonEmptyString,
  startRevision: z.number().int().nonnegative().nullable(),
  sandbox: managedSandboxLeaseSchema,
  attempts: z.number().int().nonnegative(),
  lastError: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
