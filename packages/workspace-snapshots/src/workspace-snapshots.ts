import { parseRecord } from "@open-managed-agents/runtime-resource-contract";
import { type SnapshotRef, captureSnapshot } from "./capture.js";
import { type Codec, localZstd } from "./codec.js";
import { sessionKeyOf, sessionKeys } from "./keys.js";
import { type WorkspaceSnapshotsOptions, optionsSchema } from "./options.js";
import { pruneArguments } from "./prune.js";
import { type PreparedRestore, prepareRestore } from "./restore.js";
import type { SnapshotSandbox } from "./sandbox-port.js";
import { withStoreLock } from "./store-lock.js";
import { type SweepResult, sweepSession } from "./sweep.js";

/** Snapshots of one kind of sandbox workspace in one store. */
export interface WorkspaceSnapshots {
  /** Takes and publishes a snapshot of the sandbox's workspace, building on the last one it restored or took. */
  checkpoint(input: {
    readonly sandbox: SnapshotSandbox;
    readonly sessionId: string;
    /** What made it (a sandbox id, a reason), kept in the snapshot object. */
    readonly source?: Readonly<Record<string, string>>;
    readonly signal?: AbortSignal;
  }): Promise<SnapshotRef>;
  /** Reads and checks a snapshot whole, on this machine, before any sandbox is touched. */
  prepareRestore(input: { readonly sessionId: string; readonly id: string; readonly signal?: AbortSignal }): Promise<PreparedRestore>;
  /** Restores a snapshot into the sandbox's workspace and proves it there (`integrity_failed` naming the path). */
  restore(input: { readonly sandbox: SnapshotSandbox; readonly sessionId: string; readonly id: string; readonly signal?: AbortSignal }): Promise<void>;
  /**
   * Deletes the session's objects that no published (or young) snapshot reaches. `published` may be a function:
   * it is then asked under the session's lock, so no checkpoint publishes between the answer and the sweep.
   */
  sweep(input: {
    readonly sessionId: string;
    readonly published: readonly string[] | (() => Promise<readonly string[]>);
    /** Unreferenced objects younger than this are kept. @default 24 h */
    readonly graceMs?: number;
  }): Promise<SweepResult>;
}

/** How bytes travel between this process and `sandbox`. */
async function codecFor(sandbox: SnapshotSandbox, compression: "auto" | "gzip" | "off", signal?: AbortSignal): Promise<Codec> {
  if (compression === "off") return "none";
  if (compression === "gzip") return "gzip";
  if (!(await localZstd())) return "gzip";
  const probe = await sandbox.run("probe", "command -v zstd >/dev/null 2>&1", [], signal).catch(() => null);
  return probe?.exitCode === 0 ? "zstd" : "gzip";
}

export function createWorkspaceSnapshots(options: WorkspaceSnapshotsOptions): WorkspaceSnapshots {
  const resolved = parseRecord(optionsSchema, options, { record: "workspace snapshot options", code: "invalid_config" });
  const { store } = resolved;
  // Scratch inside the workspace (a sandbox whose file routes reach only the workspace) is never listed.
  const inside = resolved.scratchDirectory.startsWith(`${resolved.workspace}/`);
  const scratchPrune = inside ? ["-o", "-path", `./${resolved.scratchDirectory.slice(resolved.workspace.length + 1)}`] : [];
  const prune = [...pruneArguments(resolved.excludes), ...scratchPrune];
  const places = {
    workspace: resolved.workspace,
    cacheDirectory: resolved.cacheDirectory,
    scratchDirectory: resolved.scratchDirectory,
    prune,
    partBytes: resolved.partBytes,
    spoolDirectory: resolved.spoolDirectory,
  };
  const keysOf = (sessionId: string) => sessionKeys(resolved.keyPrefix, sessionKeyOf(sessionId));
  const locked = <T>(sessionId: string, work: () => Promise<T>) =>
    withStoreLock(store, keysOf(sessionId).lock, { ttlMs: resolved.lockTtlMs, waitMs: resolved.lockWaitMs, now: resolved.now }, work);

  const snapshots: WorkspaceSnapshots = {
    checkpoint({ sandbox, sessionId, source = {}, signal }) {
      return locked(sessionId, async () =>
        captureSnapshot(
          { ...places, maxEntries: resolved.maxEntries },
          {
            store,
            keys: keysOf(sessionId),
            sandbox,
            codec: await codecFor(sandbox, resolved.compression, signal),
            source,
            now: resolved.now,
            ...(signal ? { signal } : {}),
          },
        ),
      );
    },
    prepareRestore({ sessionId, id, signal }) {
      return prepareRestore(places, { store, keys: keysOf(sessionId), id, ...(signal ? { signal } : {}) });
    },
    async restore({ sandbox, sessionId, id, signal }) {
      const prepared = await snapshots.prepareRestore({ sessionId, id, ...(signal ? { signal } : {}) });
      try {
        await prepared.send(sandbox, { codec: await codecFor(sandbox, resolved.compression, signal), ...(signal ? { signal } : {}) });
      } finally {
        await prepared.dispose();
      }
    },
    sweep({ sessionId, published, graceMs = 24 * 60 * 60 * 1000 }) {
      return locked(sessionId, async () => {
        const ids = typeof published === "function" ? await published() : published;
        return sweepSession(store, keysOf(sessionId), ids, resolved.now().getTime() - graceMs);
      });
    },
  };
  return snapshots;
}
