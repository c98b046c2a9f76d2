import * as z from "zod";
import type { RuntimeResourceFence } from "./fence.js";
import type { ManagedSandboxLease } from "./sandbox.js";
import type { Abortable, RuntimeResourceScope } from "./scope.js";
import type { RuntimeSessionSnapshot, SessionMemoryAccessPort } from "./session-inputs.js";

/** Where memory stores appear in the sandbox: `/mnt/memory/<storeName>/`. */
export const MEMORY_STORES_ROOT = "/mnt/memory";

/**
 * How a driver puts memory stores into the sandbox: `mount` (the store is a filesystem in the sandbox;
 * writes reach it directly) or `file_sync` (the store is copied in at attach and changed files are written
 * back at checkpoint, guarded by content hash).
 */
export type MemoryStoreMode = "mount" | "file_sync";
export const MEMORY_STORE_MODES = ["mount", "file_sync"] as const;

/** Most memory stores one run may carry. */
export const MAX_MEMORY_STORES = 16;

const segment = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/,
    "must be one path segment of letters, digits, '.', '_' or '-'",
  )
  .refine((value) => value !== "..", "must not be '..'");

/** One memory store of a run, as the sandbox sees it. */
export interface RuntimeMemoryStore {
  /** Directory name under {@link MEMORY_STORES_ROOT}; unique within a run. */
  readonly storeName: string;
  /** The control plane's store id. */
  readonly storeId: string;
  /** Nothing the sandbox does reaches the store. */
  readonly readOnly: boolean;
}

/** Schema for {@link RuntimeMemoryStore}. */
export const runtimeMemoryStoreSchema = z
  .object({ storeName: segment, storeId: segment, readOnly: z.boolean() })
  .strict();

/** Schema for a run's memory stores: at most {@link MAX_MEMORY_STORES}, store names unique. */
export const runtimeMemoryStoresSchema = z
  .array(runtimeMemoryStoreSchema)
  .max(MAX_MEMORY_STORES)
  .refine(
    (stores) => new Set(stores.map((store) => store.storeName)).size === stores.length,
    "store names must be unique",
  );

/**
 * The memory stores a session's resources name: every `memory_store` resource, its `storeId`, its
 * `name` as the directory (the id when absent) and `access: "read_only"` as read-only. Other resources
 * are ignored. The result is not validated: the host parses it with {@link runtimeMemoryStoresSchema}.
 */
export function memoryStoresOfSession(
  session: Pick<RuntimeSessionSnapshot, "resources">,
): RuntimeMemoryStore[] {
  return session.resources
    .filter((resource) => resource.type === "memory_store")
    .map((resource) => {
      const storeId = String(resource.storeId ?? "");
      const name = typeof resource.name === "string" ? resource.name : storeId;
      return { storeName: name, storeId, readOnly: resource.access === "read_only" };
    });
}

/** A write-back the store refused, or a sandbox file that cannot be a memory document. */
export interface MemoryStoreSyncConflict {
  readonly storeId: string;
  readonly path: string;
  readonly reason: "changed_in_store" | "gone_from_store" | "not_a_document_path";
}

/** What one synchronisation wrote back. A `mount` port reports zeros: writes reached the store already. */
export interface MemoryStoreSyncReport {
  readonly created: number;
  readonly updated: number;
  readonly deleted: number;
  /** Changes found in read-only stores; never written back. */
  readonly readOnlyChanges: number;
  readonly conflicts: readonly MemoryStoreSyncConflict[];
}

/** Context of both memory-store calls. */
export interface MemoryStoreCallContext extends Abortable {
  readonly scope: RuntimeResourceScope;
  readonly fence: RuntimeResourceFence;
  readonly sandbox: ManagedSandboxLease;
}

/** Puts a run's memory stores at `/mnt/memory/<storeName>/` and, for `file_sync`, writes changes back. */
export interface MemoryStoresPort {
  /** The one mode this port implements; equals the descriptor's `memoryStores`. */
  readonly mode: MemoryStoreMode;
  /**
   * Makes every store visible in the leased sandbox, read-only ones unwritable (`mount`) or never written
   * back (`file_sync`). Called after attach, before the harness. `memories` is the control plane's
   * memory access; a `file_sync` port throws `capability_unsupported` without it.
   */
  mount(
    input: MemoryStoreCallContext & {
      readonly stores: readonly RuntimeMemoryStore[];
      readonly memories?: SessionMemoryAccessPort;
    },
  ): Promise<void>;
  /**
   * Writes the sandbox's changes back: new files are created, changed and deleted files are updated or
   * deleted only if the store still holds the version the copy started from; anything else is a conflict
   * and neither side is touched. Called before each checkpoint is published.
   */
  synchronize(input: MemoryStoreCallContext): Promise<MemoryStoreSyncReport>;
}
