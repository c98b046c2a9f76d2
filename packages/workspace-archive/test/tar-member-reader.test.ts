import { createHash } from "node:crypto";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type TarMember, createTarMemberReader } from "../src/index.js";
import { encodeMemberHeader } from "../src/tar-header.js";
import { craftArchive } from "./support/crafted-archive.js";
import { tool } from "./support/gnu-tar.js";
import { tempDir } from "./support/temp-dir.js";

/** Every member with its body's sha256, reading bodies whole or in pieces. */
async function membersOf(bytes: Buffer, options: { chunk?: number; pieces?: boolean } = {}) {
  const chunk = options.chunk ?? bytes.byteLength;
  async function* chunks() {
    for (let offset = 0; offset < bytes.byteLength; offset += chunk)
      yield bytes.subarray(offset, offset + chunk);
  }
  const reader = createTarMemberReader(chunks());
  const members: Array<TarMember & { sha256: string | null }> = [];
  for (let member = await reader.next(); member !== null; member = await reader.next()) {
    let sha256: string | null = null;
    if (member.type === "file") {
      const hash = createHash("sha256");
      if (options.pieces) for await (const piece of reader.bodyChunks()) hash.update(piece);
      else hash.update(await reader.readBody());
      sha256 = hash.digest("hex");
    }
    members.push({ ...member, sha256 });
  }
  return { members, position: reader.position };
}

const sha = (text: string | Buffer) => createHash("sha256").update(text).digest("hex");

describe("createTarMemberReader", () => {
  it("reads GNU tar's own archive (long names and link targets, empty dirs, symlinks, modes) at any chunking", async () => {
    const root = await tempDir("member-reader");
    const tree = join(root, "tree");
    const long = `${"d".repeat(120)}/${"f".repeat(130)}.txt`;
    await mkdir(join(tree, "empty"), { recursive: true });
    await mkdir(join(tree, "d".repeat(120)), { recursive: true });
    await writeFile(join(tree, long), "long name");
    await writeFile(join(tree, "ünïcödé.txt"), "unicode");
    await writeFile(join(tree, "big.bin"), Buffer.alloc(300_000, 7), { mode: 0o755 });
    await symlink(`${"t".repeat(150)}/target`, join(tree, "long-link"));
    const archive = join(root, "gnu.tar");
    await tool("tar", ["--format=gnu", "-cf", archive, "-C", tree, "--sort=name", "."]);
    const bytes = await readFile(archive);
    const whole = await membersOf(bytes);
    expect(whole.position).toBe(bytes.byteLength);
    const byName = new Map(whole.members.map((member) => [member.name, member]));
    expect(byName.get(`./${long}`)).toMatchObject({
      type: "file",
      size: 9,
      sha256: sha("long name"),
    });
    expect(byName.get("./ünïcödé.txt")).toMatchObject({ type: "file", sha256: sha("unicode") });
    expect(byName.get("./big.bin")).toMatchObject({
      type: "file",
      size: 300_000,
      mode: 0o755,
      sha256: sha(Buffer.alloc(300_000, 7)),
    });
    expect(byName.get("./long-link")).toMatchObject({
      type: "symlink",
      linkname: `${"t".repeat(150)}/target`,
      size: 0,
    });
    expect(byName.get("./empty/")).toMatchObject({ type: "directory" });
    for (const chunk of [1, 7, 511, 512, 513, 4096]) {
      expect((await membersOf(bytes, { chunk })).members, `chunk ${chunk}`).toEqual(whole.members);
      expect(
        (await membersOf(bytes, { chunk, pieces: true })).members,
        `chunk ${chunk}, pieces`,
      ).toEqual(whole.members);
    }
  });

  it("reads pax headers (paths, link targets, sizes, mtimes) and ustar prefixes", async () => {
    const archive = await craftArchive([
      { name: `${"p".repeat(200)}/name.txt`, body: "pax path" },
      { name: "link", type: "symlink", linkname: `${"l".repeat(300)}` },
      { name: "dir/", type: "directory", mode: 0o700 },
    ]);
    const { members } = await membersOf(archive);
    expect(members.map((member) => [member.name, member.type])).toEqual([
      [`${"p".repeat(200)}/name.txt`, "file"],
      ["link", "symlink"],
      ["dir/", "directory"],
    ]);
    expect(members[1]?.linkname).toBe("l".repeat(300));
    expect(members[2]?.mode).toBe(0o700);
    const prefixed = Buffer.concat([
      encodeMemberHeader({
        name: `./${"a".repeat(90)}/${"b".repeat(90)}`,
        type: "file",
        mode: 0o644,
        mtime: 1_700_000_000,
        size: 0,
        linkname: null,
        uid: 0,
        gid: 0,
        uname: "",
        gname: "",
      }),
      Buffer.alloc(1024),
    ]);
    expect((await membersOf(prefixed)).members[0]).toMatchObject({
      name: `./${"a".repeat(90)}/${"b".repeat(90)}`,
      mtime: 1_700_000_000,
    });
  });

  it("reports devices, FIFOs and hard links for what they are, and skips bodies nobody read", async () => {
    const archive = await craftArchive([
      { name: "fifo", type: "fifo" },
      { name: "device", type: "character-device", devmajor: 1, devminor: 3 },
      { name: "file", body: "skipped" },
      { name: "hard", type: "link", linkname: "file" },
      { name: "after", body: "read" },
    ]);
    const reader = createTarMemberReader(
      (async function* () {
        yield archive;
      })(),
    );
    const seen: string[] = [];
    for (let member = await reader.next(); member !== null; member = await reader.next()) {
      seen.push(`${member.name}:${member.type}:${member.typeflag}`);
      if (member.name === "after") expect((await reader.readBody()).toString()).toBe("read");
    }
    expect(seen).toEqual([
      "fifo:other:6",
      "device:other:3",
      "file:file:0",
      "hard:link:1",
      "after:file:0",
    ]);
  });

  it("closes its source when left after the first member, and answers the end after", async () => {
    const archive = await craftArchive([
      { name: "a.txt", body: "hello" },
      { name: "b.txt", body: "world" },
    ]);
    let cleaned = false;
    async function* chunks(): AsyncGenerator<Buffer> {
      try {
        for (let offset = 0; offset < archive.byteLength; offset += 512)
          yield archive.subarray(offset, offset + 512);
      } finally {
        cleaned = true;
      }
    }
    const reader = createTarMemberReader(chunks());
    expect((await reader.next())?.name).toBe("a.txt");
    await reader.close();
    expect(cleaned).toBe(true);
    expect(await reader.next()).toBeNull();
  });

  it("refuses a bad checksum, a truncated member and an oversized long name as corrupt_archive", async () => {
    const good = await craftArchive([{ name: "a.txt", body: "hello" }]);
    const badChecksum = Buffer.from(good);
    badChecksum[0] = 0x62;
    const truncated = good.subarray(0, 512 + 2);
    const longName = Buffer.concat([
      (() => {
        const header = encodeMemberHeader({
          name: "././@LongLink",
          type: "file",
          mode: 0,
          mtime: 0,
          size: 1 << 20,
          linkname: null,
          uid: 0,
          gid: 0,
          uname: "",
          gname: "",
        });
        header[156] = 0x4c; // 'L'
        header.fill(0x20, 148, 156);
        let sum = 0;
        for (const byte of header) sum += byte;
        header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8, "latin1");
        return header;
      })(),
      Buffer.alloc(1 << 20),
    ]);
    for (const [label, bytes] of [
      ["checksum", badChecksum],
      ["truncated", truncated],
      ["long name", longName],
    ] as const) {
      const failure = await membersOf(Buffer.from(bytes)).catch(
        (error: { code?: string; context?: { reason?: string } }) => error,
      );
      expect(failure, label).toMatchObject({
        code: "archive_rejected",
        context: { reason: "corrupt_archive" },
      });
    }
  });
});
