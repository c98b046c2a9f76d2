import * as z from "zod";
import { type ScalarMetadata, isoTimestamp, nonEmptyString, scalarMetadataSchema } from "./json.js";
import type { RuntimeCheckpointRef } from "./checkpoint.js";
import { runtimeCheckpointRefSchema } from "./checkpoint.js";
import type { RuntimeResourceScope, TerminationReason } from "./scope.js";

/**
 * Exclusive right to run one work item's scope. Generations increase monotonically per scope; the
 * token proves the holder. The token is a secret: it never appears in a lease, checkpoint, orphan
 * record, log line, URL or error message.
 */
export interface RuntimeResourceFence extends RuntimeResourceScope {
  /** Host instance that acquired the fence. */
  readonly ownerId: string;
  /** Monotonic per scope; a newer generation supersedes every older one. */
  readonly generation: number;
  /** Opaque proof of ownership. Secret. */
  readonly token: string;
  /** ISO-8601 time after which another owner may take the fence. */
  readonly expiresAt: string;
}

/** A checkpoint or manifest produced by a work item, not active until published. */
export interface RuntimePublicationCandidate {
  /** Stable id of the candidate (workspace checkpoint id, output manifest id). */
  readonly id: string;
  /** Content hash, `sha256:<hex>` or another algorithm-prefixed digest. */
  readonly contentHash: string;
  /** JSON-scalar details the producing port needs to restore it. Never secrets. */
  readonly metadata?: ScalarMetadata;
}

/** The scope's active state: what the last successful work item published. */
export interface RuntimeResourcePublication {
  /** Generation that published it. */
  readonly generation: number;
  /** Increases by one with every successful publish of the scope's session. */
  readonly revision: number;
  readonly workspaceCandidate: RuntimePublicationCandidate;
  readonly outputCandidate: RuntimePublicationCandidate | null;
  /** Optional runtime checkpoint; an optimisation, never the canonical recovery path. */
  readonly runtimeCheckpoint?: RuntimeCheckpointRef | null;
}

/** Result of {@link RuntimeResourceFencePort.acquire}. */
export type FenceAcquireResult =
  | {
      readonly type: "acquired";
      readonly fence: RuntimeResourceFence;
      readonly publication: RuntimeResourcePublication | null;
    }
  | { readonly type: "conflict"; readonly expiresAt: string | null };

/** Result of {@link RuntimeResourceFencePort.renew}. */
export type FenceRenewResult =
  | { readonly type: "renewed"; readonly fence: RuntimeResourceFence }
  | { readonly type: "lost" };

/** Result of {@link RuntimeResourceFencePort.publish}. */
export type FencePublishResult =
  | { readonly type: "published"; readonly revision: number }
  | { readonly type: "lost" };

/**
 * Fencing for work items. Publication is keyed by session: every work item of a session reads the
 * publication the previous one wrote. Implementations must make `publish` one atomic compare-and-set on
 * (generation, token); a separate check followed by a write is not allowed.
 */
export interface RuntimeResourceFencePort {
  /**
   * Takes the fence for `scope` with a new, higher generation, unless an unexpired fence is held by
   * someone else (then `conflict` with its expiry). Called by the host first, before any other port.
   */
  acquire(input: {
    readonly scope: RuntimeResourceScope;
    readonly ownerId: string;
    readonly ttlMs: number;
  }): Promise<FenceAcquireResult>;
  /** Extends the fence's expiry. `lost` when the generation or token is no longer current or it expired. */
  renew(input: {
    readonly fence: RuntimeResourceFence;
    readonly ttlMs: number;
  }): Promise<FenceRenewResult>;
  /** True while `fence` is the scope's current, unexpired fence. Session-input authorisation calls it. */
  isCurrent(fence: RuntimeResourceFence): Promise<boolean>;
  /**
   * True while the fence of `scope` is held, unexpired, by `ownerId` for the scope's work item at
   * `generation` or a later one: the run that took `generation` still holds on, across the rotations its
   * live checkpoints make. Token-free and one atomic read: the reconciler asks it before reaping a sandbox
   * journaled under (`generation`, `ownerId`), and reaps only on `false` (expired, released, or taken over
   * by another owner or work item).
   */
  isGenerationCurrent(input: {
    readonly scope: RuntimeResourceScope;
    readonly generation: number;
    readonly ownerId: string;
  }): Promise<boolean>;
  /**
   * Atomically checks that `fence` is current and advances the session's publication to the candidates.
   * Returns the new revision, or `lost`. Publishing twice with one generation is refused as `lost`.
   */
  publish(input: {
    readonly fence: RuntimeResourceFence;
    readonly workspaceCandidate: RuntimePublicationCandidate;
    readonly outputCandidate: RuntimePublicationCandidate | null;
    readonly runtimeCheckpoint?: RuntimeCheckpointRef | null;
  }): Promise<FencePublishResult>;
  /**
   * {@link publish}, and only while the session's publication is still at `expectedRevision` (0: nothing
   * published yet): fence, generation, expiry and revision are checked and the publication advanced in one
   * atomic step. `lost` when any check fails. The reconciler salvages an abandoned run's workspace with it,
   * so a salvage can never replace what a later run published.
   */
  publishIfLatest(input: {
    readonly fence: RuntimeResourceFence;
    readonly expectedRevision: number;
    readonly workspaceCandidate: RuntimePublicationCandidate;
    readonly outputCandidate: RuntimePublicationCandidate | null;
    readonly runtimeCheckpoint?: RuntimeCheckpointRef | null;
  }): Promise<FencePublishResult>;
  /** Gives the fence up so another owner need not wait for expiry. Idempotent; a stale fence is a no-op. */
  release(input: {
    readonly fence: RuntimeResourceFence;
    readonly reason: TerminationReason;
  }): Promise<void>;
}

export const runtimePublicationCandidateSchema = z.object({
  id: nonEmptyString,
  contentHash: nonEmptyString,
  metadata: scalarMetadataSchema.optional(),
});

/** Schema for {@link RuntimeResourcePublication}. */
export const runtimeResourcePublicationSchema = z.object({
  generation: z.number().int().nonnegative(),
  revision: z.number().int().nonnegative(),
  workspaceCandidate: runtimePublicationCandidateSchema,
  outputCandidate: runtimePublicationCandidateSchema.nullable(),
  runtimeCheckpoint: runtimeCheckpointRefSchema.nullable().optional(),
});

/** Schema for a fence as stored by a fence port. */
export const runtimeResourceFenceSchema = z.object({
  workspaceId: nonEmptyString,
  environmentId: nonEmptyString,
  sessionId: nonEmptyString,
  workId: nonEmptyString,
  ownerId: nonEmptyString,
  generation: z.number().int().positive(),
  token: nonEmptyString,
  expiresAt: isoTimestamp,
});
