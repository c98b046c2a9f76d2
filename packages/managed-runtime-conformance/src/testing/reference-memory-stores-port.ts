import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import {
  CapabilityUnsupportedError,
  type MemoryStoreSyncConflict,
  type MemoryStoresPort,
  type RuntimeMemoryStore,
  type SessionMemoryAccessPort,
} from "@open-managed-agents/runtime-resource-contract";
import { sha256HexSync } from "@open-managed-agents/runtime-utils/node";
import type { ReferenceWorld } from "./reference-world.js";

const sha256 = sha256HexSync;

function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split("\\").join("/"))
    .sort();
}

interface Projection {
  readonly root: string;
  readonly store: RuntimeMemoryStore;
  readonly memories: SessionMemoryAccessPort;
  readonly baseline: Map<string, string>;
}

/**
 * `file_sync` memory stores for the reference world, from the host side of `/mnt/memory`: documents are
 * written into the session's memory directory at mount; at synchronisation new files are created and
 * changed or deleted ones written back only if the store still holds the version copied in. Read-only
 * stores are never written.
 */
export function createReferenceMemoryStoresPort(world: ReferenceWorld): MemoryStoresPort {
  const projections = new Map<string, Projection[]>();
  return {
    mode: "file_sync",
    async mount({ scope, sandbox, stores, memories, signal }) {
      if (!memories)
        throw new CapabilityUnsupportedError({
          message: "file-sync memory stores need the control plane's memory access",
          context: { requirement: "memory_stores" },
        });
      const projected: Projection[] = [];
      for (const store of stores) {
        const root = join(world.memoryDir(scope.sessionId), store.storeName);
        rmSync(root, { recursive: true, force: true });
        mkdirSync(root, { recursive: true });
        const baseline = new Map<string, string>();
        for (const document of await memories.list({ storeId: store.storeId, signal })) {
          mkdirSync(dirname(join(root, document.path)), { recursive: true });
          writeFileSync(join(root, document.path), document.content);
          baseline.set(document.path, sha256(document.content));
        }
        projected.push({ root, store, memories, baseline });
      }
      projections.set(sandbox.runtimeId, projected);
    },
    async synchronize({ sandbox, signal }) {
      const report = {
        created: 0,
        updated: 0,
        deleted: 0,
        readOnlyChanges: 0,
        conflicts: [] as MemoryStoreSyncConflict[],
      };
      for (const { root, store, memories, baseline } of projections.get(sandbox.runtimeId) ?? []) {
        const { storeId } = store;
        const present = new Map(
          filesUnder(root).map((path) => [path, readFileSync(join(root, path), "utf8")]),
        );
        const changes: [
          string,
          "created" | "updated" | "deleted",
          () => ReturnType<SessionMemoryAccessPort["create"]>,
          string | null,
        ][] = [];
        for (const [path, content] of present) {
          const base = baseline.get(path);
          if (base === sha256(content)) continue;
          changes.push(
            base === undefined
              ? [
                  path,
                  "created",
                  () => memories.create({ storeId, path, content, signal }),
                  sha256(content),
                ]
              : [
                  path,
                  "updated",
                  () =>
                    memories.update({
                      storeId,
                      path,
                      content,
                      expectedContentSha256: base,
                      signal,
                    }),
                  sha256(content),
                ],
          );
        }
        for (const [path, base] of baseline) {
          if (!present.has(path))
            changes.push([
              path,
              "deleted",
              () => memories.delete({ storeId, path, expectedContentSha256: base, signal }),
              null,
            ]);
        }
        for (const [path, kind, write, after] of changes) {
          if (store.readOnly) {
            report.readOnlyChanges += 1;
            continue;
          }
          const result = await write();
          if (result.type !== "applied") {
            report.conflicts.push({
              storeId,
              path,
              reason: result.type === "conflict" ? "changed_in_store" : "gone_from_store",
            });
            continue;
          }
          report[kind] += 1;
          if (after === null) baseline.delete(path);
          else baseline.set(path, after);
        }
      }
      return report;
    },
  };
}
