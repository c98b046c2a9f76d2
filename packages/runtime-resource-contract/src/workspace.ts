import * as z from "zod";
import { type ScalarMetadata, nonEmptyString, scalarMetadataSchema } from "./json.js";
import type { WorkspacePersistenceCapabilities, WorkspaceStrategy } from "./capabilities.js";
import type { RuntimeResourceFence, RuntimePublicationCandidate } from "./fence.js";
import type { ManagedSandboxLease } from "./sandbox.js";
import type { Abortable, RuntimeResourceScope } from "./scope.js";

/** The only mount path of a workspace. */
export const WORKSPACE_MOUNT_PATH = "/workspace";

/** A materialized workspace, ready to attach to a sandbox. */
export interface WorkspaceBinding {
  readonly bindingId: string;
  readonly mountPath: typeof WORKSPACE_MOUNT_PATH;
  readonly metadata?: ScalarMetadata;
}

/** A workspace checkpoint a work item produced; active only once the host publishes it. */
export interface WorkspaceCheckpointCandidate extends RuntimePublicationCandidate {
  /** The fence generation that produced it. */
  readonly revision: number;
}

/** Workspace persistence for one strategy at a time. */
export interface WorkspacePersistencePort {
  capabilities(scope: RuntimeResourceScope): Promise<WorkspacePersistenceCapabilities>;
  /**
   * Prepares the workspace from the scope's active checkpoint (null on the first run). Verifies the
   * checkpoint's integrity before anything reaches a sandbox; throws `integrity_failed` or
   * `provider_mismatch` for a checkpoint it cannot trust.
   */
  materialize(
    input: Abortable & {
      readonly scope: RuntimeResourceScope;
      readonly fence: RuntimeResourceFence;
      readonly strategy: WorkspaceStrategy;
      readonly activeCheckpoint: RuntimePublicationCandidate | null;
      readonly idempotencyKey: string;
    },
  ): Promise<WorkspaceBinding>;
  /** Makes the binding visible at `/workspace` inside the acquired sandbox. */
  attach(
    input: Abortable & {
      readonly scope: RuntimeResourceScope;
      readonly fence: RuntimeResourceFence;
      readonly binding: WorkspaceBinding;
      readonly sandbox: ManagedSandboxLease;
    },
  ): Promise<void>;
  /** Captures `/workspace` as a candidate. Idempotent per key. */
  checkpoint(
    input: Abortable & {
      readonly scope: RuntimeResourceScope;
      readonly fence: RuntimeResourceFence;
      readonly binding: WorkspaceBinding;
      readonly sandbox: ManagedSandboxLease;
      readonly idempotencyKey: string;
    },
  ): Promise<WorkspaceCheckpointCandidate>;
  /** Frees local resources of the binding. Idempotent. */
  release(input: {
    readonly scope: RuntimeResourceScope;
    readonly fence: RuntimeResourceFence;
    readonly binding: WorkspaceBinding;
  }): Promise<void>;
}

export const workspaceBindingSchema = z.object({
  bindingId: nonEmptyString,
  mountPath: z.literal(WORKSPACE_MOUNT_PATH),
  metadata: scalarMetadataSchema.optional(),
});

export const workspaceCheckpointCandidateSchema = z.object({
  id: nonEmptyString,
  contentHash: nonEmptyString,
  revision: z.number().int().nonnegative(),
  metadata: scalarMetadataSchema.optional(),
});
