import { IntegrityError, parseRecord } from "@open-managed-agents/runtime-resource-contract";
import { type SnapshotRef, captureSnapshot } from "./capture.js";
import { HEX32, sessionKeyOf, sessionKeys } from "./keys.js";
import { type WorkspaceSnapshotsOptions, optionsSchema } from "./options.js";
import type { RunInput } from "./progress.js";
import { pruneArguments } from "./prune.js";
import { type PreparedRestore, prepareRestore } from "./restore.js";
import type { SnapshotSandbox } from "./sandbox-port.js";
import { withStoreLock } from "./store-lock.js";
import { type SweepResult, sweepSession } from "./sweep.js";

/**
 * The session whose objects are meant: by its id, or by its key (`sessionKeyOf(id)`, as a handle carries it
 * when the id is not at hand).
 */
export type SessionInput = { readonly sessionId: string } | { readonly session: string };

/** Snapshots of one kind of sandbox workspace in one store. */
export interface WorkspaceSnapshots {
  /** Takes and publishes a snapshot of the sandbox's workspace, building on the last one it restored or took. */
  checkpoint(
    input: RunInput & {
      readonly sandbox: SnapshotSandbox;
      readonly sessionId: string;
      /** What made it (a sandbox id, a reason), kept in the snapshot object. */
      readonly source?: Readonly<Record<string, string>>;
    },
  ): Promise<SnapshotRef>;
  /** Reads and checks a snapshot whole, on this machine, before any sandbox is touched. */
  prepareRestore(
    input: SessionInput & RunInput & { readonly id: string },
  ): Promise<PreparedRestore>;
  /** Restores a snapshot into the sandbox's workspace and proves it there (`integrity_failed` naming the path). */
  restore(
    input: SessionInput & RunInput & { readonly sandbox: SnapshotSandbox; readonly id: string },
  ): Promise<void>;
  /**
   * Deletes the session's objects that no published (or young) snapshot reaches. `published` may be a function:
   * it is then asked under the session's lock, so no checkpoint publishes between the answer and the sweep.
   */
  sweep(
    input: SessionInput & {
      readonly published: readonly string[] | (() => Promise<readonly string[]>);
      /** Unreferenced objects younger than this are kept. @default 24 h */
      readonly graceMs?: number;
    },
  ): Promise<SweepResult>;
}

export function createWorkspaceSnapshots(options: WorkspaceSnapshotsOptions): WorkspaceSnapshots {
  const resolved = parseRecord(optionsSchema, options, {
    record: "workspace snapshot options",
    code: "invalid_config",
  });
  const { store, workspace, scratchDirectory } = resolved;
  // Scratch inside the workspace (a sandbox whose file routes reach only the workspace) is never listed.
  const scratchPrune = scratchDirectory.startsWith(`${workspace}/`)
    ? ["-o", "-path", `./${scratchDirectory.slice(workspace.length + 1)}`]
    : [];
  // The options with the find(1) expression of what every listing leaves out: a capture's and a restore's.
  const settings = { ...resolved, prune: [...pruneArguments(resolved.excludes), ...scratchPrune] };
  const keysOf = (input: SessionInput) => {
    if ("sessionId" in input) return sessionKeys(resolved.keyPrefix, sessionKeyOf(input.sessionId));
    if (!HEX32.test(input.session))
      throw new IntegrityError({
        message: "a snapshot session key is malformed",
        context: { reason: "malformed_session" },
      });
    return sessionKeys(resolved.keyPrefix, input.session);
  };
  const locked = <T>(input: SessionInput, work: () => Promise<T>) =>
    withStoreLock(
      store,
      keysOf(input).lock,
      { ttlMs: resolved.lockTtlMs, waitMs: resolved.lockWaitMs, now: resolved.now },
      work,
    );

  const snapshots: WorkspaceSnapshots = {
    checkpoint(input) {
      // The store, compression and clock come with the options.
      const source = input.source ?? {};
      return locked(input, async () =>
        captureSnapshot(settings, { ...input, ...resolved, source, keys: keysOf(input) }),
      );
    },
    async prepareRestore(input) {
      return prepareRestore(settings, { ...input, store, keys: keysOf(input) });
    },
    async restore(input) {
      const prepared = await snapshots.prepareRestore(input);
      try {
        await prepared.send(input.sandbox, { signal: input.signal });
      } finally {
        await prepared.dispose();
      }
    },
    sweep(input) {
      const { published, graceMs = 24 * 60 * 60 * 1000 } = input;
      return locked(input, async () => {
        const ids = typeof published === "function" ? await published() : published;
        return sweepSession(store, keysOf(input), ids, resolved.now().getTime() - graceMs);
      });
    },
  };
  return snapshots;
}
