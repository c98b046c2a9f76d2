import * as z from "zod";
import { type ScalarMetadata, nonEmptyString, scalarMetadataSchema } from "./json.js";
import type { RuntimeCheckpointKind } from "./capabilities.js";
import { runtimeCheckpointKindSchema } from "./capabilities.js";
import type { ManagedSandboxLease } from "./sandbox.js";
import type { RuntimeResourceFence } from "./fence.js";
import type { RuntimeResourceScope } from "./scope.js";
import type { SandboxJournalBinding } from "./sandbox-journal.js";

/** A runtime checkpoint recorded in a publication. Contains no secret. */
export interface RuntimeCheckpointRef {
  readonly provider: string;
  readonly checkpointId: string;
  readonly kind: RuntimeCheckpointKind;
  readonly sourceRuntimeId: string;
  readonly sessionId: string;
  /** Fence generation that created it; a restore only reuses a checkpoint of an older generation. */
  readonly workGeneration: number;
  /** Workspace revision the checkpoint corresponds to. */
  readonly workspaceRevision: number;
  readonly harnessVersion: string;
  /** Stable JSON of the harness process shape (env key names only). */
  readonly runtimeIdentity: string;
}

/**
 * Optional process or filesystem snapshot of a running sandbox. An optimisation only: a failed restore
 * falls through to a fresh acquire. Drivers keep `runtimeCheckpoints: []` until this port is wired.
 */
export interface RuntimeCheckpointPort {
  /** Captures the running sandbox. Called by the host after the workspace checkpoint. */
  create(input: {
    readonly scope: RuntimeResourceScope;
    readonly fence: RuntimeResourceFence;
    readonly sandbox: ManagedSandboxLease;
    readonly kind: RuntimeCheckpointKind;
    readonly workspaceRevision: number;
    readonly harnessVersion: string;
    readonly runtimeIdentity: string;
  }): Promise<RuntimeCheckpointRef>;
  /** Restores a checkpoint into a new runtime and returns its lease. Throws when it cannot; the host then acquires normally. */
  restore(input: {
    readonly scope: RuntimeResourceScope;
    readonly fence: RuntimeResourceFence;
    readonly checkpoint: RuntimeCheckpointRef;
    readonly signal: AbortSignal;
    /** Write-ahead journal of the runtime the restore starts; see {@link SandboxAcquireInput.journal}. */
    readonly journal?: SandboxJournalBinding;
  }): Promise<ManagedSandboxLease>;
}

/** Whether a sandbox checkpoint handle can be restored only into its own runtime or anywhere. */
export type SandboxCheckpointScope = "runtime" | "portable";
/** What a sandbox checkpoint handle captured. */
export type SandboxCheckpointKind = "filesystem" | "memory";

/**
 * A checkpoint produced by a sandbox provider (a workspace archive, a backup, a retained runtime).
 * Persisted in publication metadata, so it is JSON-safe and holds no secret.
 */
export interface SandboxCheckpointHandle {
  readonly provider: string;
  /** Provider-scoped id; content-addressed handles use `sha256:<hex>`. */
  readonly checkpointId: string;
  readonly sourceRuntimeId: string;
  readonly kind: SandboxCheckpointKind;
  /** `runtime` handles need the same runtime (retained_runtime); `portable` ones restore anywhere. */
  readonly scope: SandboxCheckpointScope;
  readonly metadata?: ScalarMetadata;
}

/** Schema for {@link RuntimeCheckpointRef}. */
export const runtimeCheckpointRefSchema = z.object({
  provider: nonEmptyString,
  checkpointId: nonEmptyString,
  kind: runtimeCheckpointKindSchema,
  sourceRuntimeId: nonEmptyString,
  sessionId: nonEmptyString,
  workGeneration: z.number().int().nonnegative(),
  workspaceRevision: z.number().int().nonnegative(),
  harnessVersion: nonEmptyString,
  runtimeIdentity: nonEmptyString,
});

/** Schema for {@link SandboxCheckpointHandle}. */
export const sandboxCheckpointHandleSchema = z.object({
  provider: nonEmptyString,
  checkpointId: nonEmptyString,
  sourceRuntimeId: nonEmptyString,
  kind: z.enum(["filesystem", "memory"]),
  scope: z.enum(["runtime", "portable"]),
  metadata: scalarMetadataSchema.optional(),
});
