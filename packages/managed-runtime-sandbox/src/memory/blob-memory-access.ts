import type { BlobStore } from "@open-managed-agents/blob-store";
import {
  InvalidRequestError,
  type SessionMemoryAccessPort,
  type SessionMemoryWriteResult,
} from "@open-managed-agents/runtime-resource-contract";
import { sha256Hex } from "@open-managed-agents/runtime-utils";

/** Options of {@link createBlobMemoryAccess}. */
export interface BlobMemoryAccessOptions {
  /** Where the documents live. */
  readonly store: BlobStore;
  /** Key prefix; documents are `<prefix>/<storeId>/<path>` (the Cloudflare mount reads the same layout). @default "memory-stores" */
  readonly keyPrefix?: string;
}

const STORE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Memory stores kept in a blob store, as a {@link SessionMemoryAccessPort}: for deployments whose memory
 * lives in their own bucket rather than behind the control plane's memory API. Updates and deletions
 * compare the stored content's sha256 with the caller's before writing; the blob store has no
 * compare-and-swap, so the check and the write are serialised per document within this process only.
 */
export function createBlobMemoryAccess(options: BlobMemoryAccessOptions): SessionMemoryAccessPort {
  const { store } = options;
  const prefix = options.keyPrefix ?? "memory-stores";
  const locks = new Map<string, Promise<unknown>>();
  const base = (storeId: string): string => {
    if (!STORE_ID.test(storeId) || storeId === "..")
      throw new InvalidRequestError({
        message: "storeId must be one path segment",
        context: { path: "storeId" },
      });
    return `${prefix}/${storeId}/`;
  };
  // One guarded write at a time per key, so two writers in this process cannot both pass the same guard.
  const exclusive = <T>(key: string, body: () => Promise<T>): Promise<T> => {
    const next = (locks.get(key) ?? Promise.resolve()).then(body);
    const settled = next.catch(() => undefined);
    locks.set(key, settled);
    void settled.then(() => locks.get(key) === settled && locks.delete(key));
    return next;
  };
  const guarded = (
    key: string,
    expected: string,
    write: () => Promise<unknown>,
  ): Promise<SessionMemoryWriteResult> =>
    exclusive(key, async () => {
      const current = await store.get(key);
      if (!current) return { type: "not_found" };
      if ((await sha256Hex(await current.text())) !== expected) return { type: "conflict" };
      await write();
      return { type: "applied" };
    });

  return {
    async list({ storeId }) {
      const root = base(storeId);
      const documents = [];
      let cursor: string | undefined;
      do {
        const page = await store.list({ prefix: root, ...(cursor ? { cursor } : {}) });
        for (const info of page.objects) {
          const object = await store.get(info.key);
          if (!object) continue;
          const content = await object.text();
          documents.push({
            path: info.key.slice(root.length),
            content,
            contentSha256: await sha256Hex(content),
          });
        }
        cursor = page.cursor;
      } while (cursor);
      return documents;
    },
    async create({ storeId, path, content }) {
      const key = base(storeId) + path;
      return exclusive(key, async () =>
        (await store.put(key, content, {
          ifNoneMatch: "*",
          contentType: "text/plain; charset=utf-8",
        }))
          ? { type: "applied" }
          : { type: "conflict" },
      );
    },
    update: ({ storeId, path, content, expectedContentSha256 }) => {
      const key = base(storeId) + path;
      return guarded(key, expectedContentSha256, () =>
        store.put(key, content, { contentType: "text/plain; charset=utf-8" }),
      );
    },
    delete: ({ storeId, path, expectedContentSha256 }) => {
      const key = base(storeId) + path;
      return guarded(key, expectedContentSha256, () => store.delete(key));
    },
  };
}
