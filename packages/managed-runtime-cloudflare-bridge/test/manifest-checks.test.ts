import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import type { ManifestEntry } from "../src/checkpoint/manifest.js";
import { checkLimits, inspectManifest } from "../src/checkpoint/manifest-checks.js";
import { decodeManifest, encodeManifest, entriesFromSandbox } from "../src/checkpoint/manifest.js";

const limits = { maxEntries: 10_000, maxBytes: 1 << 30, maxEntryBytes: 1 << 30 };
const files = (count: number): ManifestEntry[] =>
  Array.from({ length: count }, (_, index) => ({ type: "file", path: `f${String(index).padStart(5, "0")}`, mode: 0o644, mtime: 1, size: 1, sha256: "a".repeat(64) }));

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => null, (caught: unknown) => caught);
  return ManagedRuntimeError.isInstance(error) ? error.code : `not refused: ${String(error)}`;
}

describe("manifest checks", () => {
  it("holds a manifest of many entries to the restore rules, refusing a late escape without stalling", async () => {
    await inspectManifest(files(1000), limits);
    const escaping: ManifestEntry[] = [...files(1000), { type: "symlink", path: "f00700-link", mode: 0o777, mtime: 1, target: "/etc/passwd" }];
    expect(await codeOf(inspectManifest(escaping, limits))).toBe("archive_rejected");
    const inside: ManifestEntry[] = [...files(10), { type: "symlink", path: "abs", mode: 0o777, mtime: 1, target: "/workspace/f00001" }];
    await inspectManifest(inside, limits);
  });

  it("applies the archive limits as archive_rejected", () => {
    expect(() => checkLimits(files(11), { ...limits, maxEntries: 10 })).toThrow(expect.objectContaining({ code: "archive_rejected" }));
    expect(() => checkLimits(files(3), { ...limits, maxBytes: 2 })).toThrow(expect.objectContaining({ code: "archive_rejected" }));
  });

  it("parses what the sandbox reports, refuses special files, and round-trips canonically", () => {
    const nul = (...parts: string[]) => new TextEncoder().encode(parts.map((part) => `${part}\0`).join(""));
    const listing = nul("d 755 4096 1700000000.5 dir", "", "f 644 5 1700000001.25 dir/a b.txt", "", "l 777 3 1700000002.0 link", "dir");
    const hashes = nul(`${"b".repeat(64)}  ./dir/a b.txt`);
    const entries = entriesFromSandbox(listing, hashes);
    expect(entries).toEqual([
      { type: "directory", path: "dir", mode: 0o755, mtime: 1700000000 },
      { type: "file", path: "dir/a b.txt", mode: 0o644, mtime: 1700000001, size: 5, sha256: "b".repeat(64) },
      { type: "symlink", path: "link", mode: 0o777, mtime: 1700000002, target: "dir" },
    ]);
    const { bytes, sha256 } = encodeManifest([...entries].reverse());
    expect(encodeManifest(entries).sha256).toBe(sha256);
    expect(decodeManifest(bytes).entries).toEqual(entries);
    expect(() => entriesFromSandbox(nul("p 644 0 1 fifo", ""), nul())).toThrow(expect.objectContaining({ code: "archive_rejected" }));
    expect(() => decodeManifest(new TextEncoder().encode('{"format":"oma-workspace-manifest/1","entries":[{"type":"file","path":"../x","mode":420,"mtime":1,"size":1,"sha256":"' + "a".repeat(64) + '"}]}'))).toThrow(
      expect.objectContaining({ code: "integrity_failed" }),
    );
  });
});
