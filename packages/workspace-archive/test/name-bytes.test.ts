import { chmod, mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { buffer } from "node:stream/consumers";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { extract } from "tar-stream";
import { describe, expect, it } from "vitest";
import {
  createTarMemberReader,
  inspectArchive,
  inspectHeaders,
  type ListedHeader,
  packDirectory,
} from "../src/index.js";
import { tempDir } from "./support/temp-dir.js";

// Names and link targets are checked as the bytes tar and the kernel take, and modes under one policy.
async function failureOf(
  promise: Promise<unknown>,
): Promise<{ readonly code: string; readonly reason: unknown; readonly entry: unknown }> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!ManagedRuntimeError.isInstance(error))
    return { code: `not refused: ${String(error)}`, reason: null, entry: null };
  return { code: error.code, reason: error.context.reason, entry: error.context.entry };
}

async function* listing(headers: readonly ListedHeader[]) {
  yield* headers;
}

const header = (
  name: string,
  type: ListedHeader["type"],
  linkname: string | null = null,
): ListedHeader => ({ name, type, mode: 0o755, mtime: 0, size: 0, linkname });

describe("names as bytes", () => {
  it.each([
    [
      "a NUL in a link target ('..' once tar's header ends it)",
      [header("./up", "symlink", "..\u0000")],
      "./up",
    ],
    ["a lone surrogate in a name", [header("./s\ud800", "directory")], "./s\ud800"],
    ["a lone surrogate in a link target", [header("./link", "symlink", "a\udc00")], "./link"],
  ])("inspectHeaders refuses %s as invalid_name", async (_title, headers, entry) => {
    expect(await failureOf(inspectHeaders(listing(headers)))).toEqual({
      code: "archive_rejected",
      reason: "invalid_name",
      entry,
    });
  });

  it("keeps a name with a surrogate pair (one code point, valid UTF-8)", async () => {
    await expect(
      inspectHeaders(listing([header("./emoji-\ud83d\ude00", "directory")])),
    ).resolves.toBeDefined();
  });

  it.each([
    [
      "a name",
      async (root: string) =>
        writeFile(
          Buffer.concat([Buffer.from(`${root}/bad`), Buffer.from([0xff]), Buffer.from("name")]),
          "x",
        ),
    ],
    [
      "a link target",
      async (root: string) =>
        symlink(Buffer.concat([Buffer.from("t"), Buffer.from([0xc3, 0x28])]), join(root, "link")),
    ],
  ])(
    "refuses an archive (written by GNU tar) holding %s that is not valid UTF-8, as invalid_name",
    async (_title, make) => {
      const root = await tempDir("name-bytes");
      await make(root);
      const failure = await failureOf(inspectArchive(await tarBytes(root)));
      expect(failure.code).toBe("archive_rejected");
      expect(failure.reason).toBe("invalid_name");
    },
  );

  it("reads names as bytes member by member: not UTF-8 is refused, a real U+FFFD is kept", async () => {
    const root = await tempDir("member-bytes");
    await writeFile(join(root, "real-\uFFFD"), "x");
    await writeFile(
      Buffer.concat([Buffer.from(`${root}/bad-`), Buffer.from([0xed, 0xa0, 0x80])]),
      "x",
    );
    const reader = createTarMemberReader(once(await tarBytes(root)));
    const names: string[] = [];
    const failure = await failureOf(
      (async () => {
        for (let member = await reader.next(); member !== null; member = await reader.next())
          names.push(member.name);
      })(),
    );
    expect(failure).toMatchObject({ code: "archive_rejected", reason: "invalid_name" });
    // GNU tar writes folder order: whatever came before the bad name, it never came through as text.
    expect(names.filter((name) => name.startsWith("./bad-"))).toEqual([]);
    const kept = createTarMemberReader(once(await tarBytes(root, ["./real-\uFFFD"])));
    expect((await kept.next())?.name).toBe("./real-\uFFFD");
  });

  it("packs setuid and setgid files without those bits, keeping permission and sticky bits", async () => {
    const root = await tempDir("modes");
    await writeFile(join(root, "tool"), "#!/bin/sh\n");
    await chmod(join(root, "tool"), 0o6755);
    await mkdir(join(root, "shared"));
    await chmod(join(root, "shared"), 0o1777);
    const modes = new Map<string, number>();
    const reader = extract();
    reader.on("entry", (entry, stream, next) => {
      modes.set(entry.name, entry.mode ?? -1);
      stream.resume();
      stream.on("end", next);
    });
    const finished = new Promise<void>((resolve, reject) =>
      reader.on("finish", () => resolve()).on("error", reject),
    );
    reader.end(await buffer(packDirectory(root).stream));
    await finished;
    expect(modes.get("./tool")).toBe(0o755);
    expect(modes.get("./shared/")).toBe(0o1777);
  });
});

/** GNU tar's archive of `root`, as bytes. */
async function tarBytes(root: string, names: readonly string[] = ["."]): Promise<Buffer> {
  const { spawn } = await import("node:child_process");
  const child = spawn("tar", ["-cf", "-", "-C", root, ...names]);
  return buffer(child.stdout);
}

async function* once(bytes: Buffer): AsyncGenerator<Buffer> {
  yield bytes;
}
