import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ManagedRuntimeError,
  type SessionMemoryAccessPort,
  type SessionMemoryDocument,
} from "@open-managed-agents/runtime-resource-contract";
import { createLocalSubprocessSandboxProvider } from "@open-managed-agents/local-confinement/local-subprocess";
import { describe, expect, it } from "vitest";
import { createMemoryFileSync } from "../src/index.js";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

/**
 * The control plane's memory API, in memory (it cannot run here): list, and create/update/delete guarded
 * by the content hash the caller last saw, as the API does.
 */
function memoryStores(initial: Record<string, Record<string, string>>) {
  const stores = new Map(
    Object.entries(initial).map(([id, docs]) => [id, new Map(Object.entries(docs))]),
  );
  const store = (id: string) => stores.get(id) ?? new Map<string, string>();
  const port: SessionMemoryAccessPort = {
    list: async ({ storeId }) =>
      [...store(storeId)].map(
        ([path, content]): SessionMemoryDocument => ({
          path,
          content,
          contentSha256: sha(content),
        }),
      ),
    create: async ({ storeId, path, content }) => {
      if (store(storeId).has(path)) return { type: "conflict" };
      store(storeId).set(path, content);
      return { type: "applied" };
    },
    update: async ({ storeId, path, content, expectedContentSha256 }) => {
      const current = store(storeId).get(path);
      if (current === undefined) return { type: "not_found" };
      if (sha(current) !== expectedContentSha256) return { type: "conflict" };
      store(storeId).set(path, content);
      return { type: "applied" };
    },
    delete: async ({ storeId, path, expectedContentSha256 }) => {
      const current = store(storeId).get(path);
      if (current === undefined) return { type: "not_found" };
      if (sha(current) !== expectedContentSha256) return { type: "conflict" };
      store(storeId).delete(path);
      return { type: "applied" };
    },
  };
  return { port, docs: (id: string) => Object.fromEntries(store(id)) };
}

// A real local runtime; /mnt/memory is a host directory of its own.
async function runtimeWithMemory() {
  const memoryRoot = mkdtempSync(join(tmpdir(), "oma-memory-root-"));
  const provider = createLocalSubprocessSandboxProvider({
    rootDir: mkdtempSync(join(tmpdir(), "oma-memory-sync-")),
  });
  const runtime = await provider.create({
    sessionId: "ses-memory",
    workdir: "/workspace",
    memoryRoot,
  });
  return { runtime, memoryRoot };
}

describe("memory stores as a file-sync projection", () => {
  it("downloads at mount and writes back creates, updates and deletions, once", async () => {
    const { runtime, memoryRoot } = await runtimeWithMemory();
    const memory = memoryStores({ "mem-1": { "a.md": "alpha", "notes/b.md": "beta" } });
    const sync = createMemoryFileSync({ sandbox: runtime, memories: memory.port });
    try {
      await sync.mountMemoryStore({ storeName: "team", storeId: "mem-1", readOnly: false });
      expect(readFileSync(join(memoryRoot, "team", "notes", "b.md"), "utf8")).toBe("beta");
      const edit = await runtime.exec(
        "cd /mnt/memory/team && printf 'alpha 2' > a.md && rm notes/b.md && mkdir -p new && printf fresh > new/c.md",
      );
      expect(edit.exitCode, edit.output).toBe(0);
      expect(await sync.synchronizeMemoryStores()).toEqual({
        created: 1,
        updated: 1,
        deleted: 1,
        readOnlyChanges: 0,
        conflicts: [],
      });
      expect(memory.docs("mem-1")).toEqual({ "a.md": "alpha 2", "new/c.md": "fresh" });
      expect(await sync.synchronizeMemoryStores()).toEqual({
        created: 0,
        updated: 0,
        deleted: 0,
        readOnlyChanges: 0,
        conflicts: [],
      });
    } finally {
      await runtime.destroy();
    }
  });

  it("never overwrites a change made in the store meanwhile, and reports it", async () => {
    const { runtime } = await runtimeWithMemory();
    const memory = memoryStores({ "mem-2": { "a.md": "alpha", "b.md": "beta" } });
    const sync = createMemoryFileSync({ sandbox: runtime, memories: memory.port });
    try {
      await sync.mountMemoryStore({ storeName: "shared", storeId: "mem-2", readOnly: false });
      await memory.port.update({
        storeId: "mem-2",
        path: "a.md",
        content: "someone else",
        expectedContentSha256: sha("alpha"),
        signal: new AbortController().signal,
      });
      await memory.port.delete({
        storeId: "mem-2",
        path: "b.md",
        expectedContentSha256: sha("beta"),
        signal: new AbortController().signal,
      });
      await runtime.exec(
        "printf mine > /mnt/memory/shared/a.md && printf mine > /mnt/memory/shared/b.md",
      );
      const report = await sync.synchronizeMemoryStores();
      expect(report.conflicts).toEqual([
        { storeId: "mem-2", path: "a.md", reason: "changed_in_store" },
        { storeId: "mem-2", path: "b.md", reason: "gone_from_store" },
      ]);
      expect(memory.docs("mem-2")).toEqual({ "a.md": "someone else" });
    } finally {
      await runtime.destroy();
    }
  });

  it("writes nothing back from a read-only store", async () => {
    const { runtime } = await runtimeWithMemory();
    const memory = memoryStores({ "mem-3": { "a.md": "alpha" } });
    const sync = createMemoryFileSync({ sandbox: runtime, memories: memory.port });
    try {
      await sync.mountMemoryStore({ storeName: "docs", storeId: "mem-3", readOnly: true });
      await runtime.exec(
        "printf changed > /mnt/memory/docs/a.md && printf new > /mnt/memory/docs/b.md",
      );
      expect(await sync.synchronizeMemoryStores()).toMatchObject({
        created: 0,
        updated: 0,
        deleted: 0,
        readOnlyChanges: 2,
      });
      expect(memory.docs("mem-3")).toEqual({ "a.md": "alpha" });
    } finally {
      await runtime.destroy();
    }
  });

  it("refuses hostile store names and document paths with typed errors", async () => {
    const { runtime } = await runtimeWithMemory();
    const memory = memoryStores({ "mem-4": { "../escape.md": "x" } });
    const sync = createMemoryFileSync({ sandbox: runtime, memories: memory.port });
    try {
      for (const storeName of ["../workspace", "a/b", "x'; touch /tmp/pwned; '"]) {
        const error = await sync
          .mountMemoryStore({ storeName, storeId: "mem-4", readOnly: false })
          .catch((caught: unknown) => caught);
        expect(ManagedRuntimeError.hasCode(error, "invalid_request"), storeName).toBe(true);
      }
      const error = await sync
        .mountMemoryStore({ storeName: "ok", storeId: "mem-4", readOnly: false })
        .catch((caught: unknown) => caught);
      expect(ManagedRuntimeError.hasCode(error, "upstream_protocol")).toBe(true);
    } finally {
      await runtime.destroy();
    }
  });
});
