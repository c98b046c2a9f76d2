/**
 * One work item at a time through the real pieces a self-hosted operator runs: the host, SQLite fence,
 * orphan and journal stores (one database file, shared with a host in a child process), a filesystem blob
 * store, the bridge driver, and Cloudflare's bridge Worker in local workerd over the local container server.
 */
import Database from "better-sqlite3";
import { join } from "node:path";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import type { LocalBridge } from "@open-managed-agents/local-container";
import {
  applyMigrations,
  createBetterSqliteClient,
  createManagedRuntimeHost,
  createManagedRuntimeOrphanReconciler,
  createManagedRuntimeProviderRegistry,
  createSqlFencePort,
  createSqlOrphanPort,
  createSqlSandboxJournal,
} from "@open-managed-agents/managed-runtime-host";
import type { ManagedRuntimeRunResult } from "@open-managed-agents/managed-runtime-host";
import type {
  ManagedRuntimeProfile,
  RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";
import { createCloudflareBridgeManagedRuntime } from "../../src/index.js";
import { shellProfile } from "../support.js";

export { shellProfile } from "../support.js";

let sequence = 0;
/** A fresh work item of `sessionId`. */
export function workItem(sessionId: string): RuntimeResourceScope {
  sequence += 1;
  return {
    workspaceId: "ws-faults",
    environmentId: "env-faults",
    sessionId,
    workId: `work-${process.pid}-${sequence}`,
  };
}

/** Options of {@link createStackWorld}. */
export interface StackWorldOptions {
  readonly bridge: LocalBridge;
  /** Holds `runtime.sqlite` and the blob store's `store/` directory (unless `storeDir` is given). */
  readonly dir: string;
  readonly storeDir?: string;
}

/** The stores and helpers of one fault scenario. */
export type StackWorld = ReturnType<typeof createStackWorld>;

export function createStackWorld(options: StackWorldOptions) {
  const database = new Database(join(options.dir, "runtime.sqlite"));
  // The host in a child process writes the same file; wait for its lock rather than failing.
  database.pragma("journal_mode = WAL");
  database.pragma("busy_timeout = 5000");
  const client = createBetterSqliteClient(database);
  const fences = createSqlFencePort({ client });
  const orphans = createSqlOrphanPort({ client });
  const journal = createSqlSandboxJournal({ client });
  const store: BlobStore = createFsBlobStore({
    rootDir: options.storeDir ?? join(options.dir, "store"),
  });

  const prepare = async (
    scope: RuntimeResourceScope,
    profile: ManagedRuntimeProfile,
    fetchImpl?: typeof fetch,
  ) => {
    const driver = createCloudflareBridgeManagedRuntime({
      baseUrl: options.bridge.url,
      apiKey: options.bridge.apiKey,
      checkpointStore: store,
      outputStore: store,
      // One attempt per call: a dead Worker must fail the call, not be retried past the fault.
      retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
      // As the local stack is wired: a call failing as the sandbox's asks the container server if it is up.
      checkContainerRuntime: options.bridge.checkContainerRuntime,
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
    });
    const registry = createManagedRuntimeProviderRegistry({ drivers: [driver] });
    return (
      await registry.prepare({
        provider: "cloudflare-bridge",
        placement: "driver_service",
        scope,
        profile,
        providerConfig: {},
      })
    ).resources;
  };

  return {
    client,
    fences,
    orphans,
    journal,
    store,
    ready: () => applyMigrations(client),
    /** Runs one work item; `fetchImpl` sees (and may fault) every bridge request of the run. */
    async run(
      scope: RuntimeResourceScope,
      profile: ManagedRuntimeProfile,
      fetchImpl?: typeof fetch,
      heartbeatIntervalMs = 20_000,
    ): Promise<ManagedRuntimeRunResult> {
      const resources = await prepare(scope, profile, fetchImpl);
      const host = createManagedRuntimeHost({
        ownerId: `faults-${process.pid}`,
        leaseTtlMs: 60_000,
        heartbeatIntervalMs,
        cleanupTimeoutMs: 20_000,
        fences,
        orphans,
        journal,
        ...resources,
      });
      return host.run({ scope, profile });
    },
    /** One reconciler pass with a fresh driver (as a separate reconciler process would have), no backoff. */
    async reconcile(scope: RuntimeResourceScope) {
      const resources = await prepare(scope, shellProfile("true"));
      const reconciler = createManagedRuntimeOrphanReconciler({
        orphans,
        journal,
        fences,
        sandbox: resources.sandbox,
        backoff: { baseMs: 0, maxMs: 0, jitter: 0 },
      });
      return reconciler.runOnce({ limit: 100 });
    },
    close: (): void => void database.close(),
  };
}

/** A fetch that runs `onRequest` before every bridge request, so a test can kill a piece at an exact point. */
export function faultingFetch(
  onRequest: (url: URL, init: RequestInit | undefined) => Promise<void> | void,
): typeof fetch {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    await onRequest(url, init);
    return fetch(input, init);
  };
}

/**
 * True for the first request of a checkpoint's content transfer: the exec of `capture.sh bundle`, which
 * archives the files the store lacks. Packs, blobs and then the snapshot are stored after it, so a fault here
 * must publish nothing.
 */
export function isCheckpointTransfer(_url: URL, init: RequestInit | undefined): boolean {
  return bodyContains(init, '"capture.sh","bundle"');
}

/** True for the first request of a restore that reaches the sandbox: the exec of `restore.sh prepare`. */
export function isRestoreTransfer(_url: URL, init: RequestInit | undefined): boolean {
  return bodyContains(init, '"restore.sh","prepare"');
}

/** True when a request body (JSON exec argv) contains `marker`. */
export function bodyContains(init: RequestInit | undefined, marker: string): boolean {
  return typeof init?.body === "string" && init.body.includes(marker);
}
