import * as z from "zod";
import { nonEmptyString } from "./json.js";
import { type ManagedSandboxLease, managedSandboxLeaseSchema } from "./sandbox.js";
import {
  type RuntimeResourceScope,
  type TerminationReason,
  runtimeResourceScopeSchema,
  terminationReasonSchema,
} from "./scope.js";

/**
 * A runtime whose terminate failed, kept for reconciliation. It holds everything `reap` needs and no
 * fence token or credential; `lastError` has already been redacted.
 */
export interface RuntimeOrphanRecord {
  /** {@link runtimeOrphanId} of scope, generation and lease. */
  readonly id: string;
  readonly scope: RuntimeResourceScope;
  readonly generation: number;
  readonly ownerId: string;
  readonly sandbox: ManagedSandboxLease;
  readonly reason: TerminationReason;
  /** Reap attempts so far (the failed terminate counts as the first). */
  readonly attempts: number;
  /** Redacted message of the latest failure. */
  readonly lastError: string;
  /** ISO time the record was first written. */
  readonly createdAt: string;
  /** ISO time of the latest attempt. */
  readonly updatedAt: string;
}

/** What {@link RuntimeOrphanPort.enqueue} records. */
export interface RuntimeOrphanEnqueueInput {
  readonly scope: RuntimeResourceScope;
  readonly generation: number;
  readonly ownerId: string;
  readonly sandbox: ManagedSandboxLease;
  readonly reason: TerminationReason;
  /** Already redacted. */
  readonly error: string;
}

/** Durable queue of orphans. */
export interface RuntimeOrphanPort {
  /** Records an orphan. Idempotent by id: enqueueing again bumps attempts and replaces the error. */
  enqueue(input: RuntimeOrphanEnqueueInput): Promise<RuntimeOrphanRecord>;
  /** Unresolved orphans, oldest first. */
  list(input: { readonly limit: number }): Promise<readonly RuntimeOrphanRecord[]>;
  /** Records a failed reap attempt. */
  failed(input: { readonly id: string; readonly error: string }): Promise<void>;
  /** Removes a reaped orphan. Idempotent. */
  resolve(input: { readonly id: string }): Promise<void>;
}

/** Deterministic orphan id: JSON of scope, generation, provider and runtime id. */
export function runtimeOrphanId(
  scope: RuntimeResourceScope,
  generation: number,
  sandbox: ManagedSandboxLease,
): string {
  return JSON.stringify([
    scope.workspaceId,
    scope.environmentId,
    scope.sessionId,
    scope.workId,
    generation,
    sandbox.provider,
    sandbox.runtimeId,
  ]);
}

/** Schema for {@link RuntimeOrphanRecord}. */
export const runtimeOrphanRecordSchema = z.object({
  id: nonEmptyString,
  scope: runtimeResourceScopeSchema,
  generation: z.number().int().nonnegative(),
  ownerId: nonEmptyString,
  sandbox: managedSandboxLeaseSchema,
  reason: terminationReasonSchema,
  attempts: z.number().int().nonnegative(),
  lastError: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
