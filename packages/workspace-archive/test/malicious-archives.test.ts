import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import {
  extractArchive,
  inspectArchive,
  inspectHeaders,
  type ListedHeader,
  splitArchive,
  type ReadArchiveOptions,
} from "../src/index.js";
import { type CraftedEntry, craftArchive } from "./support/crafted-archive.js";
import { tempDir } from "./support/temp-dir.js";
import { snapshotTree } from "./support/tree-snapshot.js";

interface HostileCase {
  readonly title: string;
  readonly entries: readonly CraftedEntry[];
  readonly code: "archive_rejected" | "limit_exceeded";
  readonly entry: string;
  readonly reason?: string;
  readonly options?: ReadArchiveOptions;
}

const file = (name: string, body = "data"): CraftedEntry => ({ name, body });

const CASES: readonly HostileCase[] = [
  {
    title: "a '..' traversal",
    entries: [file("./ok.txt"), file("../x")],
    code: "archive_rejected",
    entry: "../x",
    reason: "parent_segment",
  },
  {
    title: "a nested traversal",
    entries: [file("a/../../x")],
    code: "archive_rejected",
    entry: "a/../../x",
    reason: "parent_segment",
  },
  {
    title: "an absolute name",
    entries: [file("/etc/x")],
    code: "archive_rejected",
    entry: "/etc/x",
    reason: "absolute_name",
  },
  {
    title: "an absolute symlink followed by a write through it",
    entries: [{ name: "link", type: "symlink", linkname: "/tmp/outside" }, file("link/file")],
    code: "archive_rejected",
    entry: "link",
    reason: "symlink_escape",
  },
  {
    title: "a write through an inside symlink",
    entries: [
      { name: "sub/", type: "directory" },
      { name: "link", type: "symlink", linkname: "sub" },
      file("link/file"),
    ],
    code: "archive_rejected",
    entry: "link/file",
    reason: "write_through_symlink",
  },
  {
    title: "a relative symlink climbing out",
    entries: [
      { name: "a/b/", type: "directory" },
      { name: "a/b/up", type: "symlink", linkname: "../../../x" },
    ],
    code: "archive_rejected",
    entry: "a/b/up",
    reason: "symlink_escape",
  },
  {
    title: "a symlink that escapes only through another symlink",
    entries: [
      { name: "sub/", type: "directory" },
      { name: "sub/r", type: "symlink", linkname: ".." },
      { name: "x", type: "symlink", linkname: "sub/r/.." },
    ],
    code: "archive_rejected",
    entry: "./x",
    reason: "symlink_escape",
  },
  {
    title: "a hardlink to an absolute path",
    entries: [{ name: "h", type: "link", linkname: "/etc/passwd" }],
    code: "archive_rejected",
    entry: "h",
    reason: "hardlink_escape",
  },
  {
    title: "a hardlink climbing out",
    entries: [{ name: "h", type: "link", linkname: "../outside/sentinel.txt" }],
    code: "archive_rejected",
    entry: "h",
    reason: "hardlink_escape",
  },
  {
    title: "a hardlink through a symlink",
    entries: [
      { name: "sub/", type: "directory" },
      file("sub/f"),
      { name: "l", type: "symlink", linkname: "sub" },
      { name: "h", type: "link", linkname: "l/f" },
    ],
    code: "archive_rejected",
    entry: "h",
    reason: "hardlink_escape",
  },
  {
    title: "a character device",
    entries: [{ name: "tty", type: "character-device", devmajor: 5, devminor: 0 }],
    code: "archive_rejected",
    entry: "tty",
    reason: "unsupported_type",
  },
  {
    title: "a block device",
    entries: [{ name: "sda", type: "block-device", devmajor: 8, devminor: 0 }],
    code: "archive_rejected",
    entry: "sda",
    reason: "unsupported_type",
  },
  {
    title: "a FIFO",
    entries: [file("first"), { name: "pipe", type: "fifo" }],
    code: "archive_rejected",
    entry: "pipe",
    reason: "unsupported_type",
  },
  {
    title: "a bomb by entry count",
    entries: Array.from({ length: 12 }, (_, index) => file(`f${index}`)),
    code: "limit_exceeded",
    entry: "f10",
    options: { limits: { maxEntries: 10 } },
  },
  {
    title: "one entry over maxEntryBytes",
    entries: [file("small"), file("huge", "x".repeat(2000))],
    code: "limit_exceeded",
    entry: "huge",
    options: { limits: { maxEntryBytes: 1000 } },
  },
  {
    title: "a bomb by total bytes",
    entries: [
      file("one", "x".repeat(600)),
      file("two", "x".repeat(600)),
      file("three", "x".repeat(600)),
    ],
    code: "limit_exceeded",
    entry: "three",
    options: { limits: { maxBytes: 1500 } },
  },
];

async function expectRejection(
  promise: Promise<unknown>,
  hostile: HostileCase,
): Promise<ManagedRuntimeError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(
    ManagedRuntimeError.isInstance(error),
    `expected a typed error, got ${String(error)}`,
  ).toBe(true);
  const typed = error as ManagedRuntimeError;
  expect(typed.code).toBe(hostile.code);
  expect(typed.context.entry).toBe(hostile.entry);
  if (hostile.reason) expect(typed.context.reason).toBe(hostile.reason);
  expect(typed.message).toContain(JSON.stringify(hostile.entry));
  return typed;
}

/** The headers of a crafted archive, as a listing describes them (device and FIFO types passed through as they are). */
function headersOf(entries: readonly CraftedEntry[]): ListedHeader[] {
  return entries.map(({ name, body, type, mode, linkname }) => ({
    name,
    type: (type ?? "file") as ListedHeader["type"],
    mode: mode ?? 0o644,
    mtime: 1_700_000_000,
    size: body === undefined ? 0 : Buffer.byteLength(body),
    linkname: linkname ?? null,
  }));
}

describe("hostile archives", () => {
  for (const hostile of CASES) {
    it(`inspectHeaders rejects ${hostile.title} as the archive of those headers is rejected`, async () => {
      await expectRejection(inspectHeaders(headersOf(hostile.entries), hostile.options), hostile);
    });

    it(`extractArchive rejects ${hostile.title} and writes nothing anywhere`, async () => {
      const base = await tempDir("hostile");
      const target = join(base, "work", "space");
      const outside = join(base, "outside");
      await mkdir(target, { recursive: true });
      await mkdir(outside);
      await writeFile(join(outside, "sentinel.txt"), "untouched");
      await writeFile(join(target, "existing.txt"), "before");
      // The parent's own mtime may change (the staging folder lives there); its listing may not.
      const snapshot = async () => ({
        target: await snapshotTree(target, { directoryTimes: true }),
        outside: await snapshotTree(outside, { directoryTimes: true }),
      });
      const before = await snapshot();
      const archive = await craftArchive(hostile.entries);

      await expectRejection(extractArchive(archive, target, hostile.options), hostile);

      expect(await snapshot()).toEqual(before);
      expect(await readdir(join(base, "work"))).toEqual(["space"]);
      expect(await readdir(base)).toEqual(["outside", "work"]);
    });

    it(`inspectArchive and splitArchive reject ${hostile.title}`, async () => {
      const archive = await craftArchive(hostile.entries);
      await expectRejection(inspectArchive(archive, hostile.options), hostile);
      const drain = async () => {
        for await (const part of splitArchive(archive, {
          maxPartBytes: 64 * 1024,
          ...hostile.options,
        }))
          expect(part.size).toBeGreaterThan(0);
      };
      await expectRejection(drain(), hostile);
    });
  }

  it("inspectHeaders summarises an accepted listing as inspectArchive summarises its archive", async () => {
    const entries: CraftedEntry[] = [
      { name: "./", type: "directory" },
      { name: "./sub/", type: "directory" },
      file("./sub/a.txt", "alpha"),
      { name: "./sub/link", type: "symlink", linkname: "a.txt" },
      { name: "./top", type: "symlink", linkname: "/workspace/sub" },
      { name: "./hard", type: "link", linkname: "sub/a.txt" },
      file("./b.bin", "x".repeat(3000)),
    ];
    const options = { absoluteRoot: "/workspace" };
    const {
      archiveBytes: _bytes,
      gzip: _gzip,
      sha256: _sha,
      ...archive
    } = await inspectArchive(await craftArchive(entries), options);
    const seen: string[] = [];
    expect(
      await inspectHeaders(headersOf(entries), {
        ...options,
        onEntry: (entry) => seen.push(`${entry.kind} ${entry.path}`),
      }),
    ).toEqual(archive);
    expect(seen).toEqual([
      "directory ",
      "directory sub",
      "file sub/a.txt",
      "symlink sub/link",
      "symlink top",
      "hardlink hard",
      "file b.bin",
    ]);
    await expect(
      inspectHeaders(headersOf(entries), { limits: { maxEntries: 0 } } as never),
    ).rejects.toMatchObject({ code: "invalid_config" });
  });

  it("accepts outside symlinks when allowed but still refuses writing through them", async () => {
    const target = join(await tempDir("allow"), "ws");
    const venv = await craftArchive([
      { name: "python", type: "symlink", linkname: "/usr/bin/python3" },
    ]);
    await extractArchive(venv, target, { allowSymlinksOutsideRoot: true });
    expect((await snapshotTree(target)).python).toEqual({
      type: "symlink",
      mode: 0,
      target: "/usr/bin/python3",
    });
    const through = await craftArchive([
      { name: "link", type: "symlink", linkname: "/tmp" },
      file("link/planted"),
    ]);
    await expectRejection(
      extractArchive(through, target, { allowSymlinksOutsideRoot: true, mode: "merge" }),
      {
        title: "",
        entries: [],
        code: "archive_rejected",
        entry: "link/planted",
        reason: "write_through_symlink",
      },
    );
  });

  it("checks absolute symlink targets below absoluteRoot as paths inside the root, and only those", async () => {
    const options = { absoluteRoot: "/workspace" };
    const inside = await craftArchive([
      { name: "sub/", type: "directory" },
      { name: "sub/deep/", type: "directory" },
      { name: "top", type: "symlink", linkname: "/workspace" },
      { name: "sub/deep/abs", type: "symlink", linkname: "/workspace/sub" },
    ]);
    expect((await inspectArchive(inside, options)).symlinks).toBe(2);
    const refused: Array<[string, readonly CraftedEntry[]]> = [
      ["/etc/passwd", [{ name: "l", type: "symlink", linkname: "/etc/passwd" }]],
      [
        "a sibling sharing the prefix",
        [{ name: "l", type: "symlink", linkname: "/workspace-other/x" }],
      ],
      [
        "a climb out after the root",
        [
          { name: "d/", type: "directory" },
          { name: "d/l", type: "symlink", linkname: "/workspace/../etc" },
        ],
      ],
      [
        "an escape through another link",
        [
          { name: "sub/", type: "directory" },
          { name: "sub/r", type: "symlink", linkname: ".." },
          { name: "x", type: "symlink", linkname: "/workspace/sub/r/.." },
        ],
      ],
    ];
    for (const [what, entries] of refused) {
      const error = await inspectArchive(await craftArchive(entries), options).then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(ManagedRuntimeError.hasCode(error, "archive_rejected"), what).toBe(true);
      expect((error as ManagedRuntimeError).context.reason, what).toBe("symlink_escape");
    }
    // Without absoluteRoot every absolute target points outside.
    await expect(inspectArchive(inside)).rejects.toMatchObject({
      code: "archive_rejected",
      context: { reason: "symlink_escape" },
    });
  });

  it("rejects a symlink that would escape through a symlink already in the destination (merge)", async () => {
    const target = join(await tempDir("merge-escape"), "ws");
    await extractArchive(
      await craftArchive([
        { name: "sub/", type: "directory" },
        { name: "sub/r", type: "symlink", linkname: ".." },
      ]),
      target,
    );
    const before = await snapshotTree(target);
    const second = await craftArchive([{ name: "x", type: "symlink", linkname: "sub/r/.." }]);
    await expectRejection(extractArchive(second, target, { mode: "merge" }), {
      title: "",
      entries: [],
      code: "archive_rejected",
      entry: "./x",
      reason: "symlink_escape",
    });
    expect(await snapshotTree(target)).toEqual(before);
  });

  it("rejects truncated and non-tar input as a corrupt archive", async () => {
    const archive = await craftArchive([file("a.txt", "x".repeat(5000))]);
    const truncated = extractArchive(
      archive.subarray(0, 2048),
      join(await tempDir("corrupt"), "ws"),
    );
    await expect(truncated).rejects.toMatchObject({
      code: "archive_rejected",
      context: { reason: "corrupt_archive" },
    });
    await expect(
      inspectArchive(Buffer.from("this is not a tar archive at all".repeat(40))),
    ).rejects.toMatchObject({
      code: "archive_rejected",
      context: { reason: "corrupt_archive" },
    });
    await expect(
      inspectArchive(Buffer.from([0x1f, 0x8b, 1, 2, 3, 4, 5, 6, 7, 8])),
    ).rejects.toMatchObject({ code: "archive_rejected" });
  });
});
