import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { type ManifestEntry, decodeManifest } from "../src/checkpoint/manifest.js";
import { checkLimits, inspectManifest, withinLimits } from "../src/checkpoint/manifest-checks.js";
import {
  MANIFEST_V3_HEADER,
  decodeManifestLines,
  encodeManifestLines,
} from "../src/checkpoint/manifest-lines.js";
import { HashMissing, parseSandboxRecords } from "../src/checkpoint/sandbox-records.js";
import { encodeManifestV2 } from "./legacy-manifest.js";

const limits = { maxEntries: 10_000, maxBytes: 1 << 30, maxEntryBytes: 1 << 30 };
const files = (count: number): ManifestEntry[] =>
  Array.from({ length: count }, (_, index) => ({
    type: "file",
    path: `f${String(index).padStart(5, "0")}`,
    mode: 0o644,
    mtime: 1,
    size: 1,
    sha256: "a".repeat(64),
  }));

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  return ManagedRuntimeError.isInstance(error) ? error.code : `not refused: ${String(error)}`;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Bytes handed over `size` at a time, so every record and line boundary falls inside some chunk. */
async function* chunked(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let offset = 0; offset < bytes.byteLength; offset += size)
    yield bytes.subarray(offset, offset + size);
}

async function encodeV3(entries: readonly ManifestEntry[]): Promise<Buffer> {
  async function* source() {
    yield* entries;
  }
  return Buffer.concat(await collect(encodeManifestLines(source())));
}

/** Records as the sandbox writes them, sorted the way `LC_ALL=C sort -z` sorts them. */
const records = (...items: string[]) =>
  Buffer.concat(
    [...items]
      .map((item) => Buffer.from(item))
      .sort(Buffer.compare)
      .flatMap((item) => [item, Buffer.from([0])]),
  );

describe("manifest checks", () => {
  it("holds a manifest of many entries to the restore rules, refusing a late escape without stalling", async () => {
    await inspectManifest(files(1000), limits);
    const escaping: ManifestEntry[] = [
      ...files(1000),
      { type: "symlink", path: "f00700-link", mode: 0o777, mtime: 1, target: "/etc/passwd" },
    ];
    expect(await codeOf(inspectManifest(escaping, limits))).toBe("archive_rejected");
    const inside: ManifestEntry[] = [
      ...files(10),
      { type: "symlink", path: "abs", mode: 0o777, mtime: 1, target: "/workspace/f00001" },
    ];
    await inspectManifest(inside, limits);
  });

  it("applies the archive limits as archive_rejected while the entries stream, reading no further than the first past a limit", async () => {
    expect(await codeOf(checkLimits(files(11), { ...limits, maxEntries: 10 }))).toBe(
      "archive_rejected",
    );
    expect(await codeOf(checkLimits(files(3), { ...limits, maxBytes: 2 }))).toBe(
      "archive_rejected",
    );
    expect(await codeOf(inspectManifest(files(11), { ...limits, maxEntries: 10 }))).toBe(
      "archive_rejected",
    );
    let produced = 0;
    async function* endless(): AsyncGenerator<ManifestEntry> {
      for (;;) {
        produced += 1;
        yield {
          type: "file",
          path: `f${produced}`,
          mode: 0o644,
          mtime: 1,
          size: 1000,
          sha256: "a".repeat(64),
        };
      }
    }
    expect(await codeOf(checkLimits(endless(), { ...limits, maxBytes: 50_000 }))).toBe(
      "archive_rejected",
    );
    expect(produced).toBe(51);
    const error = await collect(withinLimits(files(5), { ...limits, maxEntryBytes: 0 })).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: "archive_rejected", context: { limit: "maxEntryBytes" } });
  });

  it("reads the sandbox's sorted records in any chunking: entries, their hashes, leftovers of the cache passed over", async () => {
    const hash = "b".repeat(64);
    const bytes = records(
      "dir//ed 755 4096 1700000000.5 ",
      `dir/a b.txt//h${hash}`,
      "dir/a b.txt//ef 644 5 1700000001.25 ",
      "link//el 777 3 1700000002.0 dir with space",
      `gone.txt//h${"c".repeat(64)}`,
    );
    const expected: ManifestEntry[] = [
      { type: "directory", path: "dir", mode: 0o755, mtime: 1700000000 },
      { type: "file", path: "dir/a b.txt", mode: 0o644, mtime: 1700000001, size: 5, sha256: hash },
      { type: "symlink", path: "link", mode: 0o777, mtime: 1700000002, target: "dir with space" },
    ];
    for (const size of [1, 7, 4096])
      expect(await collect(parseSandboxRecords(chunked(bytes, size), false))).toEqual(expected);
    // A listed file without a hash vanished or could not be read: refused naming it, never left out.
    const vanished = Buffer.concat([bytes, records("vanished//ef 644 1 1 ")]);
    const refused = await collect(parseSandboxRecords(chunked(vanished, 64), false)).catch(
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({
      code: "sandbox_failed",
      context: { entry: "vanished", reason: "unreadable" },
    });
    // With cached hashes a listed file without one means the cache missed it: hash everything.
    await expect(collect(parseSandboxRecords(chunked(vanished, 64), true))).rejects.toBeInstanceOf(
      HashMissing,
    );
    await expect(
      collect(parseSandboxRecords(chunked(records("a//ef 644 1 1 ", "a//hnot-a-hash"), 64), true)),
    ).rejects.toBeInstanceOf(HashMissing);
    await expect(
      collect(parseSandboxRecords(chunked(records("not a hash list"), 64), true)),
    ).rejects.toBeInstanceOf(HashMissing);
    expect(
      await codeOf(collect(parseSandboxRecords(chunked(records("not a hash list"), 64), false))),
    ).toBe("sandbox_failed");
    expect(
      await codeOf(collect(parseSandboxRecords(chunked(records("fifo//ep 644 0 1 "), 64), false))),
    ).toBe("archive_rejected");
    const unsorted = Buffer.from("b//ed 755 0 1 \0a//ed 755 0 1 \0");
    expect(await codeOf(collect(parseSandboxRecords(chunked(unsorted, 64), false)))).toBe(
      "sandbox_failed",
    );
    expect(
      await codeOf(collect(parseSandboxRecords(chunked(Buffer.from("a//ed 755 0 1 "), 64), false))),
    ).toBe("sandbox_failed");
  });

  it("writes /3 canonically, a line an entry, packs declared before first use, and reads it back in any chunking", async () => {
    const pack = { sha256: "c".repeat(64), size: 10 };
    const entries: ManifestEntry[] = [
      { type: "directory", path: "d", mode: 0o755, mtime: 1 },
      {
        type: "file",
        path: "d/a",
        mode: 0o644,
        mtime: 1,
        size: 4,
        sha256: "d".repeat(64),
        location: { pack, offset: 0 },
      },
      {
        type: "file",
        path: "d/b",
        mode: 0o600,
        mtime: 2,
        size: 6,
        sha256: "e".repeat(64),
        location: { pack, offset: 4 },
      },
      { type: "file", path: "e", mode: 0o644, mtime: 1, size: 9, sha256: "f".repeat(64) },
      { type: "symlink", path: "l", mode: 0o777, mtime: 1, target: "d/a" },
    ];
    const bytes = await encodeV3(entries);
    const lines = bytes.toString("utf8").split("\n");
    expect(`${lines[0]}\n`).toBe(MANIFEST_V3_HEADER);
    expect(lines.filter((line) => line.includes('"type":"pack"'))).toHaveLength(1);
    expect(lines.at(-1)).toBe("");
    // The same entries, however built, are the same bytes (the checkpoint id).
    expect((await encodeV3(entries.map((entry) => ({ ...entry })))).equals(bytes)).toBe(true);
    for (const size of [1, 13, 1 << 16])
      expect(await collect(decodeManifestLines(chunked(bytes, size)))).toEqual(entries);
    // Out of order, repeated, or a path the sandbox could not report: never written.
    expect(await codeOf(encodeV3([entries[1] as ManifestEntry, entries[0] as ManifestEntry]))).toBe(
      "sandbox_failed",
    );
    expect(await codeOf(encodeV3([entries[0] as ManifestEntry, entries[0] as ManifestEntry]))).toBe(
      "sandbox_failed",
    );
  });

  it("refuses a /3 manifest out of order, repeating a path, outside its pack, unterminated, or not /3, as integrity_failed", async () => {
    const pack = { sha256: "c".repeat(64), size: 10 };
    const bytes = await encodeV3([
      {
        type: "file",
        path: "a",
        mode: 0o644,
        mtime: 1,
        size: 4,
        sha256: "d".repeat(64),
        location: { pack, offset: 0 },
      },
      {
        type: "file",
        path: "b",
        mode: 0o644,
        mtime: 1,
        size: 6,
        sha256: "e".repeat(64),
        location: { pack, offset: 4 },
      },
    ]);
    const lines = bytes.toString("utf8").split("\n").slice(0, -1);
    const variant = async (edit: (copy: string[]) => string[] | string) => {
      const edited = edit([...lines]);
      const text = typeof edited === "string" ? edited : `${edited.join("\n")}\n`;
      return codeOf(collect(decodeManifestLines(chunked(Buffer.from(text), 5))));
    };
    expect(await variant((copy) => copy)).toBe("not refused: null");
    expect(
      await variant((copy) => [
        copy[0] as string,
        copy[1] as string,
        copy[3] as string,
        copy[2] as string,
      ]),
    ).toBe("integrity_failed");
    expect(await variant((copy) => [...copy, copy[3] as string])).toBe("integrity_failed");
    expect(
      await variant((copy) => copy.map((line) => line.replace('"offset":4', '"offset":5'))),
    ).toBe("integrity_failed");
    expect(
      await variant((copy) => copy.map((line) => line.replace('"pack":0,', '"pack":1,'))),
    ).toBe("integrity_failed");
    expect(
      await variant((copy) => copy.map((line) => line.replace('"path":"b"', '"path":"../b"'))),
    ).toBe("integrity_failed");
    expect(await variant((copy) => `${copy.join("\n")}`)).toBe("integrity_failed");
    expect(await variant((copy) => copy.slice(1))).toBe("integrity_failed");
    expect(await variant(() => [])).toBe("integrity_failed");
    expect(
      await variant((copy) => [
        copy[0] as string,
        `{"type":"directory","path":"${"x".repeat(20_000)}","mode":493,"mtime":1}`,
      ]),
    ).toBe("integrity_failed");
  });

  it("still reads the earlier one-document formats, and refuses a file placed outside its pack", () => {
    const pack = { sha256: "c".repeat(64), size: 10 };
    const file = (path: string, offset: number, size: number): ManifestEntry => ({
      type: "file",
      path,
      mode: 0o644,
      mtime: 1,
      size,
      sha256: "d".repeat(64),
      location: { pack, offset },
    });
    const entries = [
      file("a", 0, 4),
      file("b", 4, 6),
      {
        type: "file",
        path: "c",
        mode: 0o644,
        mtime: 1,
        size: 9,
        sha256: "e".repeat(64),
      } as ManifestEntry,
    ];
    const { bytes } = encodeManifestV2(entries);
    const wire = JSON.parse(new TextDecoder().decode(bytes)) as {
      format: string;
      packs: unknown[];
      entries: Array<Record<string, unknown>>;
    };
    expect(decodeManifest(bytes).entries).toEqual(entries);
    const edited = (change: (entry: Record<string, unknown>) => void) => {
      const copy = structuredClone(wire);
      change(copy.entries[1] as Record<string, unknown>);
      return () => decodeManifest(new TextEncoder().encode(JSON.stringify(copy)));
    };
    for (const change of [
      (entry: Record<string, unknown>) => (entry.offset = 5),
      (entry: Record<string, unknown>) => (entry.pack = 1),
      (entry: Record<string, unknown>) => delete entry.offset,
    ]) {
      expect(edited(change)).toThrow(expect.objectContaining({ code: "integrity_failed" }));
    }
    // The earliest format names no packs.
    const v1 = { format: "oma-workspace-manifest/1", entries: [{ ...wire.entries[0] }] };
    expect(() => decodeManifest(new TextEncoder().encode(JSON.stringify(v1)))).toThrow(
      expect.objectContaining({ code: "integrity_failed" }),
    );
    expect(() =>
      decodeManifest(
        new TextEncoder().encode(
          `{"format":"oma-workspace-manifest/1","entries":[{"type":"file","path":"../x","mode":420,"mtime":1,"size":1,"sha256":"${"a".repeat(64)}"}]}`,
        ),
      ),
    ).toThrow(expect.objectContaining({ code: "integrity_failed" }));
  });
});
