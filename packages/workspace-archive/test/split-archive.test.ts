import { link, mkdir, stat, writeFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { buffer } from "node:stream/consumers";
import { describe, expect, it } from "vitest";
import {
  applyJoinPlan,
  extractArchive,
  joinPlanCommands,
  packDirectory,
  parseJoinPlan,
  splitArchive,
  type JoinPlan,
} from "../src/index.js";
import { craftArchive } from "./support/crafted-archive.js";
import { tool } from "./support/gnu-tar.js";
import { tempDir } from "./support/temp-dir.js";
import { snapshotTree } from "./support/tree-snapshot.js";

async function sampleTree(root: string): Promise<void> {
  await mkdir(join(root, "data", "nested"), { recursive: true });
  await writeFile(join(root, "data", "big it's.bin"), randomBytes(300_000), { mode: 0o755 });
  await writeFile(join(root, "data", "nested", "small.txt"), "hello");
  await writeFile(join(root, "empty"), "");
}

async function collect(split: AsyncIterable<{ bytes: Buffer; size: number; index: number }>) {
  const parts: Buffer[] = [];
  for await (const part of split) parts.push(part.bytes);
  return parts;
}

describe("splitArchive", () => {
  it("keeps every part within maxPartBytes and GNU tar plus the join command rebuild the tree", async () => {
    const base = await tempDir("split-gnu");
    const source = join(base, "source");
    await mkdir(source);
    await sampleTree(source);
    const split = splitArchive(packDirectory(source).stream, { maxPartBytes: 16 * 1024 });
    const parts = await collect(split);
    expect(parts.length).toBeGreaterThan(18);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(16 * 1024);
    expect(split.joinPlans).toHaveLength(1);
    const plan = split.joinPlans[0] as JoinPlan;
    expect(plan.target).toBe("./data/big it's.bin");
    expect(plan.chunks.every((chunk) => chunk.name.startsWith(`${plan.chunkDirectory}/`))).toBe(
      true,
    );

    const restored = join(base, "restored");
    await mkdir(restored);
    for (const [index, part] of parts.entries()) {
      const file = join(base, `part-${index}.tar`);
      await writeFile(file, part);
      await tool("tar", ["-xf", file, "-C", restored]);
    }
    await tool("sh", ["-c", joinPlanCommands(plan, { cwd: restored, verify: true })]);
    expect(await snapshotTree(restored)).toEqual(await snapshotTree(source));
  });

  it("turns hardlinks to a chunked file into join-plan links", async () => {
    const base = await tempDir("split-links");
    const source = join(base, "source");
    await mkdir(source);
    await writeFile(join(source, "big"), randomBytes(100_000));
    await link(join(source, "big"), join(source, "big-again"));
    await writeFile(join(source, "small"), "s");
    await link(join(source, "small"), join(source, "small-again"));
    const tarFile = join(base, "in.tar");
    await tool("tar", ["-cf", tarFile, "-C", source, "."]);
    const split = splitArchive((await import("node:fs")).createReadStream(tarFile), {
      maxPartBytes: 32 * 1024,
    });
    const restored = join(base, "restored");
    for (const [index, part] of (await collect(split)).entries())
      await extractArchive(part, restored, { mode: index === 0 ? "replace" : "merge" });
    // GNU tar stores whichever name it meets first as the file and the other as the hardlink.
    expect(split.joinPlans).toHaveLength(1);
    expect(split.joinPlans[0]?.links).toHaveLength(1);
    for (const plan of split.joinPlans) await applyJoinPlan(restored, plan);
    expect(await snapshotTree(restored)).toEqual(await snapshotTree(source));
    expect((await stat(join(restored, "big-again"))).ino).toBe(
      (await stat(join(restored, "big"))).ino,
    );
    expect((await stat(join(restored, "small-again"))).ino).toBe(
      (await stat(join(restored, "small"))).ino,
    );
  });

  it("fails applyJoinPlan with integrity_failed on a corrupted chunk and leaves the target absent", async () => {
    const base = await tempDir("split-corrupt");
    const source = join(base, "source");
    await mkdir(source);
    await sampleTree(source);
    const split = splitArchive(packDirectory(source).stream, { maxPartBytes: 64 * 1024 });
    const restored = join(base, "restored");
    for (const [index, part] of (await collect(split)).entries())
      await extractArchive(part, restored, { mode: index === 0 ? "replace" : "merge" });
    const plan = split.joinPlans[0] as JoinPlan;
    await writeFile(join(restored, (plan.chunks[1] as { name: string }).name), randomBytes(10));
    await expect(applyJoinPlan(restored, plan)).rejects.toMatchObject({
      code: "integrity_failed",
      context: { target: plan.target },
    });
    await expect(stat(join(restored, plan.target))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("emits one empty part for an empty archive and refuses a second iteration", async () => {
    const split = splitArchive(await craftArchive([]), { maxPartBytes: 16 * 1024 });
    const parts = await collect(split);
    expect(parts).toHaveLength(1);
    expect(parts[0]?.length).toBe(1024);
    expect(() => split[Symbol.asyncIterator]()).toThrow(/only once/);
  });

  it("rejects members inside the chunk folder and headers larger than a part", async () => {
    await expect(
      collect(
        splitArchive(await craftArchive([{ name: "./.oma-chunks/x", body: "x" }]), {
          maxPartBytes: 16 * 1024,
        }),
      ),
    ).rejects.toMatchObject({
      code: "archive_rejected",
      context: { entry: "./.oma-chunks/x", reason: "entry_conflict" },
    });
    const longTarget = `${"t".repeat(200)}/`.repeat(100);
    await expect(
      collect(
        splitArchive(await craftArchive([{ name: "l", type: "symlink", linkname: longTarget }]), {
          maxPartBytes: 16 * 1024,
        }),
      ),
    ).rejects.toMatchObject({
      code: "limit_exceeded",
      context: { entry: "l", limit: "maxPartBytes" },
    });
  });

  it("validates options and join plans with typed errors naming the field", async () => {
    expect(() => splitArchive(Buffer.alloc(0), { maxPartBytes: 1000 })).toThrowError(
      expect.objectContaining({
        code: "invalid_config",
        context: expect.objectContaining({ path: "maxPartBytes" }),
      }),
    );
    expect(() =>
      splitArchive(Buffer.alloc(0), { maxPartBytes: 1 << 20, chunkDirectory: "../x" }),
    ).toThrowError(expect.objectContaining({ code: "invalid_config" }));
    const plan: JoinPlan = {
      version: 1,
      target: "./a",
      mode: 0o644,
      mtime: 0,
      size: 1,
      sha256: "0".repeat(64),
      chunkDirectory: "./.oma-chunks/1",
      chunks: [{ name: "./.oma-chunks/1/0", size: 1 }],
      links: [],
    };
    expect(parseJoinPlan(plan)).toEqual(plan);
    const hostile: [string, unknown][] = [
      ["chunks.0.name", { ...plan, chunks: [{ name: "./elsewhere/0", size: 1 }] }],
      ["target", { ...plan, target: "./../etc/passwd" }],
      ["target", { ...plan, target: "./.oma-chunks/1/x" }],
      ["size", { ...plan, size: 2 }],
      ["links.0", { ...plan, links: ["/etc/shadow"] }],
    ];
    for (const [path, input] of hostile) {
      expect(() => parseJoinPlan(input), path).toThrowError(
        expect.objectContaining({
          code: "invalid_request",
          context: expect.objectContaining({ path }),
        }),
      );
      expect(() => joinPlanCommands(input as JoinPlan), path).toThrowError(
        expect.objectContaining({ code: "invalid_request" }),
      );
    }
  });

  it("quotes every path in the join command", () => {
    const command = joinPlanCommands({
      version: 1,
      target: "./it's $(rm -rf ~).bin",
      mode: 0o600,
      mtime: 86_400,
      size: 1,
      sha256: "a".repeat(64),
      chunkDirectory: "./.oma-chunks/q",
      chunks: [{ name: "./.oma-chunks/q/00000000", size: 1 }],
      links: [],
    });
    expect(command).toContain(`'./it'\\''s $(rm -rf ~).bin'`);
    expect(command).toContain("chmod 0600");
    expect(command).toContain("TZ=UTC0 touch -t 197001020000.00");
    expect(command.startsWith("cd '/workspace' && ")).toBe(true);
  });

  it("holds at most one part in memory: parts are produced only as they are consumed", async () => {
    const base = await tempDir("split-lazy");
    await sampleTree(base);
    // Far more than the pipeline buffers, so an abandoned split must leave the pack unfinished.
    await writeFile(join(base, "large.bin"), randomBytes(16 * 1024 * 1024));
    const packed = packDirectory(base);
    const iterator = splitArchive(packed.stream, { maxPartBytes: 16 * 1024 })[
      Symbol.asyncIterator
    ]();
    const first = await iterator.next();
    expect(first.done).toBe(false);
    await iterator.return?.(undefined);
    await expect(packed.digest).rejects.toBeDefined();
    expect(await buffer(packDirectory(base).stream)).toBeInstanceOf(Buffer);
  });
});
