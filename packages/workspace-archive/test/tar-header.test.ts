import { lstat, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type ArchiveEntryInfo, inspectArchive } from "../src/index.js";
import { PartBuilder } from "../src/part-builder.js";
import { encodeMemberHeader, memberHeaderSize, type MemberHeader } from "../src/tar-header.js";
import { tool } from "./support/gnu-tar.js";
import { tempDir } from "./support/temp-dir.js";

const base: MemberHeader = {
  name: "./a",
  type: "file",
  mode: 0o644,
  mtime: 1_700_000_000,
  size: 0,
  linkname: null,
  uid: 0,
  gid: 0,
  uname: "",
  gname: "",
};

describe("encodeMemberHeader", () => {
  const names = [
    "./short.txt",
    `./${"d".repeat(90)}/${"f".repeat(90)}`,
    `./${"x".repeat(300)}`,
    "./ünïcödé/日本語 ✓.txt",
  ];
  it("writes headers that tar-stream and GNU tar read back, with sizes known in advance", async () => {
    const part = new PartBuilder(0, 1024 * 1024);
    for (const name of names) {
      const header = { ...base, name, size: 3 };
      expect(encodeMemberHeader(header).length).toBe(memberHeaderSize(header));
      part.add(header, [Buffer.from("abc")]);
    }
    const link = {
      ...base,
      name: "./l",
      type: "symlink" as const,
      linkname: `${"t".repeat(150)}/ü`,
    };
    expect(encodeMemberHeader(link).length).toBe(memberHeaderSize(link));
    part.add(link, []);
    const { bytes } = part.finish();
    const seen: ArchiveEntryInfo[] = [];
    await inspectArchive(bytes, { onEntry: (entry) => seen.push(entry) });
    expect(seen.map((entry) => entry.name)).toEqual([...names, "./l"]);
    expect(seen.at(-1)?.linkTarget).toBe(link.linkname);
    expect(seen[0]).toMatchObject({ mode: 0o644, mtime: 1_700_000_000, size: 3 });
    const file = join(await tempDir("header"), "part.tar");
    await writeFile(file, bytes);
    expect((await tool("tar", ["-tf", file])).trim().split("\n")).toEqual([...names, "./l"]);
  });

  it("carries an exact mtime in a pax record that GNU tar restores to the nanosecond", async () => {
    const members: MemberHeader[] = [
      {
        ...base,
        name: "./d/",
        type: "directory",
        mode: 0o750,
        mtime: 1_700_000_001,
        exactMtime: "1700000001.000000007",
      },
      {
        ...base,
        name: "./d/f.txt",
        size: 3,
        mtime: 1_700_000_002,
        exactMtime: "1700000002.123456789",
      },
      {
        ...base,
        name: "./d/s",
        type: "symlink",
        linkname: "f.txt",
        mtime: 1_700_000_003,
        exactMtime: "1700000003.500000000",
      },
    ];
    const part = new PartBuilder(0, 1024 * 1024);
    for (const member of members) {
      expect(encodeMemberHeader(member).length).toBe(memberHeaderSize(member));
      part.add(member, member.size > 0 ? [Buffer.from("abc")] : []);
    }
    const dir = await tempDir("exact-mtime");
    const file = join(dir, "part.tar");
    await writeFile(file, part.finish().bytes);
    const into = join(dir, "out");
    await mkdir(into);
    await tool("tar", ["-xpf", file, "-C", into]);
    const nanoseconds = async (path: string) => (await lstat(path, { bigint: true })).mtimeNs;
    // The folder keeps its own time although its children were extracted into it after it.
    expect(await nanoseconds(join(into, "d/f.txt"))).toBe(1_700_000_002_123_456_789n);
    expect(await nanoseconds(join(into, "d/s"))).toBe(1_700_000_003_500_000_000n);
    expect(await nanoseconds(join(into, "d"))).toBe(1_700_000_001_000_000_007n);
    expect((await lstat(join(into, "d"))).mode & 0o7777).toBe(0o750);
  });
});
