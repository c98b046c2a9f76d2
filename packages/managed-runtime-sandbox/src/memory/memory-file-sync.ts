import {
  InvalidRequestError,
  MEMORY_STORES_ROOT,
  type MemoryStoreSyncConflict,
  type MemoryStoreSyncReport,
  type SessionMemoryAccessPort,
  type SessionMemoryWriteResult,
  UpstreamProtocolError,
} from "@open-managed-agents/runtime-resource-contract";
import type { SandboxMemoryMountPort, SandboxPort } from "@open-managed-agents/sandbox";
import { sha256Hex } from "@open-managed-agents/runtime-utils";

/** Where projected memory stores live in the sandbox. */
export const MEMORY_PROJECTION_ROOT = MEMORY_STORES_ROOT;

/** One write-back the store refused, or a file that cannot be a memory document. */
export type MemorySyncConflict = MemoryStoreSyncConflict;

/** What {@link MemoryFileSync.synchronizeMemoryStores} wrote back. */
export type MemorySyncReport = MemoryStoreSyncReport;

/** Memory stores as copied files: `mountMemoryStore` downloads, `synchronizeMemoryStores` uploads what changed. */
export interface MemoryFileSync extends SandboxMemoryMountPort {
  synchronizeMemoryStores(input?: { readonly signal?: AbortSignal }): Promise<MemorySyncReport>;
}

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
// A document path: relative, `/`-separated segments, none empty, `.` or `..`, no control characters.
const isDocumentPath = (path: string): boolean =>
  path.length > 0 &&
  path.length <= 1024 &&
  !/[\u0000-\u001f\\]/.test(path) &&
  path.split("/").every((segment) => segment !== "" && segment !== "." && segment !== "..");

interface ProjectedStore {
  readonly storeId: string;
  readonly readOnly: boolean;
  /** Path → content hash of the store's version the sandbox copy started from. */
  readonly baseline: Map<string, string>;
}

/**
 * A file-sync projection of memory stores for sandboxes that cannot mount them (the bridge), over `exec`,
 * `readFile` and `writeFile` only. At mount the store's documents are written under
 * `/mnt/memory/<storeName>/`. At each synchronisation, for writable stores: a new file is created, a
 * changed file is updated only if the store still holds the version the copy started from, and a file
 * deleted in the sandbox is deleted from the store under the same guard. A store-side change is never
 * overwritten (a conflict is reported and the file is left as it is); read-only stores are never written.
 */
export function createMemoryFileSync(options: {
  readonly sandbox: Pick<SandboxPort, "exec" | "readFile" | "writeFile">;
  readonly memories: SessionMemoryAccessPort;
}): MemoryFileSync {
  const { sandbox, memories } = options;
  const stores = new Map<string, ProjectedStore>();
  const never = new AbortController().signal;

  return {
    async mountMemoryStore({ storeName, storeId, readOnly }) {
      if (
        !SEGMENT.test(storeName) ||
        !SEGMENT.test(storeId) ||
        storeName === ".." ||
        storeId === ".."
      ) {
        throw new InvalidRequestError({
          message:
            "storeName and storeId must each be one path segment of letters, digits, '.', '_' or '-'",
          context: { path: "storeName" },
        });
      }
      const documents = await memories.list({ storeId, signal: never });
      const baseline = new Map<string, string>();
      const root = `${MEMORY_PROJECTION_ROOT}/${storeName}`;
      const made = await sandbox.exec(`mkdir -p '${root}'`);
      if (made.exitCode !== 0)
        throw new UpstreamProtocolError({
          message: `could not create ${root} in the sandbox`,
          context: { storeName },
        });
      for (const document of documents) {
        if (!isDocumentPath(document.path)) {
          throw new UpstreamProtocolError({
            message: `memory store ${storeId} holds a document whose path is not a relative path`,
            context: { storeId },
          });
        }
        await sandbox.writeFile(`${root}/${document.path}`, document.content);
        baseline.set(document.path, await sha256Hex(document.content));
      }
      stores.set(storeName, { storeId, readOnly, baseline });
    },

    async synchronizeMemoryStores(input = {}) {
      const signal = input.signal ?? never;
      const report = {
        created: 0,
        updated: 0,
        deleted: 0,
        readOnlyChanges: 0,
        conflicts: [] as MemorySyncConflict[],
      };
      for (const [storeName, store] of stores) {
        const root = `${MEMORY_PROJECTION_ROOT}/${storeName}`;
        const listed = await sandbox.exec(`cd '${root}' && find . -type f -print0`, { signal });
        if (listed.exitCode !== 0)
          throw new UpstreamProtocolError({
            message: `could not list ${root} in the sandbox`,
            context: { storeName },
          });
        const present = new Map<string, string>();
        // Sorted, so reports come out in the same order whatever order find walks in.
        for (const entry of listed.stdout.split("\u0000").sort()) {
          if (entry === "") continue;
          const path = entry.replace(/^\.\//, "");
          if (!isDocumentPath(path)) {
            report.conflicts.push({ storeId: store.storeId, path, reason: "not_a_document_path" });
            continue;
          }
          present.set(path, await sandbox.readFile(`${root}/${path}`));
        }
        const apply = async (
          path: string,
          write: () => Promise<SessionMemoryWriteResult>,
          after: string | null,
          count: "created" | "updated" | "deleted",
        ) => {
          if (store.readOnly) {
            report.readOnlyChanges += 1;
            return;
          }
          const result = await write();
          if (result.type === "applied") {
            report[count] += 1;
            if (after === null) store.baseline.delete(path);
            else store.baseline.set(path, after);
          } else {
            report.conflicts.push({
              storeId: store.storeId,
              path,
              reason: result.type === "conflict" ? "changed_in_store" : "gone_from_store",
            });
          }
        };
        for (const [path, content] of present) {
          const hash = await sha256Hex(content);
          const base = store.baseline.get(path);
          if (base === hash) continue;
          if (base === undefined)
            await apply(
              path,
              () => memories.create({ storeId: store.storeId, path, content, signal }),
              hash,
              "created",
            );
          else
            await apply(
              path,
              () =>
                memories.update({
                  storeId: store.storeId,
                  path,
                  content,
                  expectedContentSha256: base,
                  signal,
                }),
              hash,
              "updated",
            );
        }
        for (const [path, base] of [...store.baseline]) {
          if (present.has(path)) continue;
          await apply(
            path,
            () =>
              memories.delete({
                storeId: store.storeId,
                path,
                expectedContentSha256: base,
                signal,
              }),
            null,
            "deleted",
          );
        }
      }
      return report;
    },
  };
}
