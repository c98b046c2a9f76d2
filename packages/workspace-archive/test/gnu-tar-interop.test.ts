import { createReadStream } from "node:fs";
import { mkdir, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { createWriteStream } from "node:fs";
import { describe, expect, it } from "vitest";
import { extractArchive, inspectArchive, packDirectory } from "../src/index.js";
import { tool } from "./support/gnu-tar.js";
import { tempDir } from "./support/temp-dir.js";
import { snapshotTree } from "./support/tree-snapshot.js";

const LONG = `${"long-segment-".repeat(9)}end`;

/** A tree that needs GNU long names / pax records: deep long paths, unicode, a long symlink target. */
async function interopTree(root: string): Promise<void> {
  await mkdir(join(root, LONG, LONG), { recursive: true });
  await writeFile(join(root, LONG, LONG, `${LONG}.txt`), "deep");
  await writeFile(join(root, "ünïcödé ✓.txt"), "unicode", { mode: 0o600 });
  await writeFile(join(root, "run.sh"), "#!/bin/sh\necho hi\n", { mode: 0o755 });
  await mkdir(join(root, "empty dir"));
  await symlink(`${LONG}/${LONG}/${LONG}.txt`, join(root, "long-link"));
  await symlink("run.sh", join(root, "short-link"));
  for (const path of ["ünïcödé ✓.txt", "run.sh", join(LONG, LONG, `${LONG}.txt`)])
    await utimes(join(root, path), 1_650_000_000, 1_650_000_000);
  for (const path of [join(LONG, LONG), LONG, "empty dir", "."])
    await utimes(join(root, path), 1_660_000_000, 1_660_000_000);
}

describe("GNU tar interoperability", () => {
  for (const format of ["gnu", "posix", "ustar-gzip"] as const) {
    it(`extracts \`tar cf - -C dir .\` output (${format}) exactly`, async () => {
      const base = await tempDir(`gnu-${format}`);
      const source = join(base, "source");
      await mkdir(source);
      await interopTree(source);
      const file = join(base, "workspace.tar");
      const args =
        format === "ustar-gzip"
          ? ["-czf", file, "--format=gnu"]
          : ["-cf", file, `--format=${format}`];
      await tool("tar", [...args, "--owner=0", "--group=0", "--numeric-owner", "-C", source, "."]);
      const listing = await tool("tar", ["-tf", file]);
      expect(listing.split("\n")).toContain("./");

      const target = join(base, "target");
      const result = await extractArchive(createReadStream(file), target);
      expect(result.gzip).toBe(format === "ustar-gzip");
      expect(await snapshotTree(target, { directoryTimes: true })).toEqual(
        await snapshotTree(source, { directoryTimes: true }),
      );
      expect((await inspectArchive(createReadStream(file))).entries).toBe(result.entries);
    });
  }

  for (const gzip of [false, true]) {
    it(`produces archives GNU tar lists and extracts (gzip ${gzip})`, async () => {
      const base = await tempDir("ours-to-gnu");
      const source = join(base, "source");
      await mkdir(source);
      await interopTree(source);
      const file = join(base, gzip ? "ours.tar.gz" : "ours.tar");
      await pipeline(packDirectory(source, { gzip }).stream, createWriteStream(file));
      const members = (await tool("tar", [gzip ? "-tzf" : "-tf", file])).trim().split("\n");
      expect(members[0]).toBe("./");
      expect(members).toContain("./run.sh");
      expect(members).toContain("./empty dir/");
      expect(members).toContain(`./${LONG}/${LONG}/${LONG}.txt`);
      const target = join(base, "target");
      await mkdir(target);
      await tool("tar", [gzip ? "-xzf" : "-xf", file, "-C", target]);
      expect(await snapshotTree(target, { directoryTimes: true })).toEqual(
        await snapshotTree(source, { directoryTimes: true }),
      );
    });
  }
});
