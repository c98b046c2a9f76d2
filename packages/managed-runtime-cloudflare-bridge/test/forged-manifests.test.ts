import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { extract } from "tar-stream";
import { afterEach, describe, expect, it } from "vitest";
import { type ManifestEntry, decodeManifest } from "../src/checkpoint/manifest.js";
import { inspectManifest } from "../src/checkpoint/manifest-checks.js";
import { MANIFEST_V3_HEADER, decodeManifestLines } from "../src/checkpoint/manifest-lines.js";
import { assembleRestoreArchive } from "../src/checkpoint/restore-archive.js";

// Manifests as a tampered store could hold them, hash and all: every check reads names and link targets as
// the bytes tar would write, and modes under the one mode policy.
const limits = { maxEntries: 1000, maxBytes: 1 << 30, maxEntryBytes: 1 << 30 };
let directory: string | undefined;
afterEach(async () => {
  if (directory) await rm(directory, { recursive: true, force: true });
  directory = undefined;
});

async function failureOf(
  promise: Promise<unknown>,
): Promise<{ readonly code: string; readonly message: string }> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!ManagedRuntimeError.isInstance(error))
    return { code: `not refused: ${String(error)}`, message: "" };
  return { code: error.code, message: error.message };
}

/** A /3 manifest of `lines` (JSON text each, escapes as written), read back through the line decoder. */
async function decodeLines(...lines: string[]): Promise<ManifestEntry[]> {
  const bytes = Buffer.from(`${MANIFEST_V3_HEADER}${lines.map((line) => `${line}\n`).join("")}`);
  const entries: ManifestEntry[] = [];
  for await (const entry of decodeManifestLines(listed([bytes]))) entries.push(entry);
  return entries;
}

async function* listed<T>(items: readonly T[]) {
  yield* items;
}

async function assemble(entries: readonly ManifestEntry[]) {
  directory = await mkdtemp(join(tmpdir(), "oma-forged-"));
  const store = createFsBlobStore({ rootDir: directory });
  return assembleRestoreArchive({ store, keyPrefix: "p", session: "s" }, listed(entries), {
    limits,
    spool: { maxBytes: 1 << 30, directory },
  });
}

const FORGED: ReadonlyArray<readonly [string, readonly string[], readonly ManifestEntry[]]> = [
  [
    "a NUL in a link target (tar's header ends the target there: '..')",
    ['{"type":"symlink","path":"up","mode":511,"mtime":0,"target":"..\\u0000"}'],
    [{ type: "symlink", path: "up", mode: 0o777, mtime: 0, target: "..\u0000" }],
  ],
  [
    "two lone surrogates (checked as two names, written by tar as the same U+FFFD)",
    [
      '{"type":"symlink","path":"s\\ud800","mode":511,"mtime":0,"target":"."}',
      '{"type":"directory","path":"s\\udc00","mode":493,"mtime":0}',
    ],
    [
      { type: "symlink", path: "s\ud800", mode: 0o777, mtime: 0, target: "." },
      { type: "directory", path: "s\udc00", mode: 0o755, mtime: 0 },
    ],
  ],
  [
    "a lone surrogate in a link target",
    ['{"type":"symlink","path":"link","mode":511,"mtime":0,"target":"a\\udfff"}'],
    [{ type: "symlink", path: "link", mode: 0o777, mtime: 0, target: "a\udfff" }],
  ],
];

describe("forged manifests", () => {
  it.each(FORGED)(
    "refuses %s when the manifest is read, checked or assembled",
    async (_title, lines, entries) => {
      expect((await failureOf(decodeLines(...lines))).code).toBe("integrity_failed");
      const document = Buffer.from(
        `{"format":"oma-workspace-manifest/2","packs":[],"entries":[${lines.join(",")}]}`,
      );
      expect((await failureOf(Promise.resolve().then(() => decodeManifest(document)))).code).toBe(
        "integrity_failed",
      );
      expect((await failureOf(inspectManifest(entries, limits))).code).toBe("archive_rejected");
      expect((await failureOf(assemble(entries))).code).toBe("archive_rejected");
    },
  );

  it("refuses a setuid, setgid or any mode outside the policy when the manifest is read", async () => {
    for (const mode of [0o4755, 0o2755, 0o10755]) {
      const line = `{"type":"directory","path":"bin","mode":${mode},"mtime":0}`;
      expect((await failureOf(decodeLines(line))).code).toBe("integrity_failed");
    }
    // The sticky bit is kept, like every permission bit.
    expect(await decodeLines('{"type":"directory","path":"shared","mode":1023,"mtime":0}')).toEqual(
      [{ type: "directory", path: "shared", mode: 0o1777, mtime: 0 }],
    );
  });

  it("never writes a setuid or setgid bit into a restore's archive", async () => {
    const archive = await assemble([{ type: "directory", path: "bin", mode: 0o6755, mtime: 0 }]);
    try {
      const chunks: Buffer[] = [];
      for (const segment of archive.segments)
        for await (const chunk of segment.chunks()) chunks.push(Buffer.from(chunk));
      const modes: number[] = [];
      const reader = extract();
      reader.on("entry", (header, stream, next) => {
        modes.push(header.mode ?? -1);
        stream.resume();
        stream.on("end", next);
      });
      const finished = new Promise<void>((resolve, reject) =>
        reader.on("finish", () => resolve()).on("error", reject),
      );
      reader.end(Buffer.concat(chunks));
      await finished;
      expect(modes).toEqual([0o755]);
    } finally {
      await archive.dispose();
    }
  });
});
