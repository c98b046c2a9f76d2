import {
  type ManagedSandboxLease,
  type RuntimeResourceFence,
  type RuntimeResourceFencePort,
  type RuntimeResourceScope,
  type SandboxJournalRecord,
  type WorkspaceCheckpointCandidate,
  type WorkspacePersistencePort,
  parseRecord,
  parseWorkspaceCheckpointCandidate,
  runtimeResourceFenceSchema,
} from "@open-managed-agents/runtime-resource-contract";

/**
 * The driver ports a salvage works through, created without a work item: the harness port's
 * `endAbandoned` and the workspace port, whose `checkpoint_restore` strategy captures `/workspace`.
 */
export interface ReconcilerSalvage {
  endAbandoned(input: {
    readonly scope: RuntimeResourceScope;
    readonly sandbox: ManagedSandboxLease;
    readonly signal?: AbortSignal;
  }): Promise<void>;
  readonly workspace: Pick<WorkspacePersistencePort, "materialize" | "checkpoint" | "release">;
}

/** Dependencies of {@link salvageSandbox}. */
export interface SandboxSalvager {
  readonly salvage: ReconcilerSalvage;
  readonly fences: Pick<RuntimeResourceFencePort, "acquire" | "publishIfLatest" | "release">;
  /** Owner id of the salvage's fences. */
  readonly ownerId: string;
  /** Time-to-live of a salvage's fence: the end, checkpoint and publish must fit in it. */
  readonly leaseTtlMs: number;
  /** Redacted message of a failure. */
  readonly describe: (error: unknown) => string;
}

/** What a salvage did; whatever it did, the sandbox is reaped afterwards, except while `held`. */
export type SalvageOutcome =
  /** The workspace was checkpointed and published as the session's next revision. */
  | { readonly type: "salvaged"; readonly revision: number; readonly generation: number }
  /** Something newer than the run's start revision was published: nothing is published. */
  | { readonly type: "superseded" }
  /** The publish was refused: something newer was published meanwhile, or the salvage's fence expired. */
  | { readonly type: "refused" }
  /** A live run holds the session's fence: the record is left alone until a later pass. */
  | { readonly type: "held" }
  /** The sandbox could not be salvaged (gone, unreachable, refused checkpoint): nothing is published. */
  | { readonly type: "failed"; readonly message: string };

/**
 * Salvages the workspace of a journaled sandbox whose run's host is gone, in this order:
 * 1. takes the session's fence under a fresh generation (a live holder means `held`);
 * 2. compares the session's revision with the record's start revision (newer means `superseded`);
 * 3. ends the abandoned harness, so nothing writes while the tree is captured;
 * 4. checkpoints `/workspace` through the driver's workspace port;
 * 5. publishes it only if the session is still at the start revision (one atomic `publishIfLatest`);
 * 6. releases the fence.
 * The record must carry a start revision (its `ama_worker` harness started and its host never settled it).
 */
export async function salvageSandbox(
  salvager: SandboxSalvager,
  record: SandboxJournalRecord & { readonly startRevision: number },
): Promise<SalvageOutcome> {
  const { fences } = salvager;
  const acquired = await fences.acquire({
    scope: record.scope,
    ownerId: salvager.ownerId,
    ttlMs: salvager.leaseTtlMs,
  });
  if (acquired.type === "conflict") return { type: "held" };
  const fence = parseRecord(runtimeResourceFenceSchema, acquired.fence, {
    record: "fence",
    code: "internal",
  });
  try {
    if ((acquired.publication?.revision ?? 0) !== record.startRevision)
      return { type: "superseded" };
    let workspaceCandidate;
    try {
      workspaceCandidate = await captureAbandoned(salvager.salvage, {
        record,
        scope: record.scope,
        fence,
        idempotencyKey: `${record.scope.workId}:${fence.generation}:salvage`,
        signal: new AbortController().signal,
      });
    } catch (error) {
      return { type: "failed", message: salvager.describe(error) };
    }
    const published = await fences.publishIfLatest({
      fence,
      expectedRevision: record.startRevision,
      workspaceCandidate,
      // The killed turn's outputs were never collected: the session keeps the manifest it had.
      outputCandidate: acquired.publication?.outputCandidate ?? null,
      runtimeCheckpoint: null,
    });
    if (published.type === "lost") return { type: "refused" };
    return { type: "salvaged", revision: published.revision, generation: fence.generation };
  } finally {
    await fences.release({ fence, reason: "lease_lost" }).catch(() => undefined);
  }
}

/**
 * Ends the abandoned harness of `record`'s sandbox, then checkpoints its `/workspace` through the workspace
 * port under `fence` (for `scope`, the session's fence holder's scope): the tree as the dead run left it.
 */
export async function captureAbandoned(
  salvage: ReconcilerSalvage,
  input: {
    readonly record: SandboxJournalRecord;
    readonly scope: RuntimeResourceScope;
    readonly fence: RuntimeResourceFence;
    /** Prefix of the materialize and checkpoint idempotency keys. */
    readonly idempotencyKey: string;
    readonly signal: AbortSignal;
  },
): Promise<WorkspaceCheckpointCandidate> {
  const { record, scope, fence, idempotencyKey: key, signal } = input;
  const { sandbox } = record;
  await salvage.endAbandoned({ scope: record.scope, sandbox, signal });
  const binding = await salvage.workspace.materialize({
    scope,
    fence,
    strategy: "checkpoint_restore",
    activeCheckpoint: null,
    idempotencyKey: `${key}-materialize`,
    signal,
  });
  try {
    const candidate = await salvage.workspace.checkpoint({
      scope,
      fence,
      binding,
      sandbox,
      idempotencyKey: `${key}-checkpoint`,
      signal,
    });
    return parseWorkspaceCheckpointCandidate(candidate);
  } finally {
    await salvage.workspace.release({ scope, fence, binding }).catch(() => undefined);
  }
}
