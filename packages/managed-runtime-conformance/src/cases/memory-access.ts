import type {
  SessionMemoryAccessPort,
  SessionMemoryWriteResult,
} from "@open-managed-agents/runtime-resource-contract";
import { sha256HexSync } from "@open-managed-agents/runtime-utils/node";

const sha256 = sha256HexSync;

/**
 * The control plane's memory API as the suite needs it: documents per store, and create, update and delete
 * guarded by the content hash the caller last saw, answering `conflict` or `not_found` as the API does.
 */
export function createSuiteMemoryAccess(
  initial: Readonly<Record<string, Readonly<Record<string, string>>>>,
) {
  const stores = new Map(
    Object.entries(initial).map(([id, documents]) => [id, new Map(Object.entries(documents))]),
  );
  const store = (id: string): Map<string, string> => {
    const existing = stores.get(id);
    if (existing) return existing;
    const created = new Map<string, string>();
    stores.set(id, created);
    return created;
  };
  const guarded = (
    storeId: string,
    path: string,
    expected: string,
    write: (documents: Map<string, string>) => void,
  ): SessionMemoryWriteResult => {
    const current = store(storeId).get(path);
    if (current === undefined) return { type: "not_found" };
    if (sha256(current) !== expected) return { type: "conflict" };
    write(store(storeId));
    return { type: "applied" };
  };
  const port: SessionMemoryAccessPort = {
    list: async ({ storeId }) =>
      [...store(storeId)].map(([path, content]) => ({
        path,
        content,
        contentSha256: sha256(content),
      })),
    create: async ({ storeId, path, content }) => {
      if (store(storeId).has(path)) return { type: "conflict" };
      store(storeId).set(path, content);
      return { type: "applied" };
    },
    update: async ({ storeId, path, content, expectedContentSha256 }) =>
      guarded(storeId, path, expectedContentSha256, (documents) => documents.set(path, content)),
    delete: async ({ storeId, path, expectedContentSha256 }) =>
      guarded(storeId, path, expectedContentSha256, (documents) => documents.delete(path)),
  };
  return {
    port,
    documents: (storeId: string): Record<string, string> => Object.fromEntries(store(storeId)),
  };
}
