import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { afterEach, describe, expect, it } from "vitest";
import type { ManifestEntry } from "../src/checkpoint/manifest.js";
import { MAX_PACK_READ_BYTES, assembleRestoreArchive } from "../src/checkpoint/restore-archive.js";

let directory: string | undefined;
afterEach(async () => {
  if (directory) await rm(directory, { recursive: true, force: true });
});

const limits = { maxEntries: 1000, maxBytes: 1 << 30, maxEntryBytes: 1 << 30 };

describe("restore archive assembly", () => {
  it("refuses a pack larger than any a checkpoint writes before reading it, as integrity_failed", async () => {
    directory = await mkdtemp(join(tmpdir(), "oma-assembly-"));
    // A real fs store, empty: the refusal must come before any read (a read would be not_found).
    const store = createFsBlobStore({ rootDir: directory });
    const pack = { sha256: "a".repeat(64), size: MAX_PACK_READ_BYTES + 1 };
    const entries: ManifestEntry[] = [{ type: "file", path: "big", mode: 0o644, mtime: 0, size: 10, sha256: "b".repeat(64), location: { pack, offset: 0 } }];
    const listed = async function* () {
      yield* entries;
    };
    const failure = await assembleRestoreArchive({ store, keyPrefix: "p", session: "s" }, listed(), { limits, spool: { maxBytes: 1 << 30, directory } }).catch((error: { code?: string; message?: string }) => error);
    expect(failure).toMatchObject({ code: "integrity_failed" });
    expect(String((failure as { message?: string }).message)).toMatch(/larger than any pack/);
  });
});
