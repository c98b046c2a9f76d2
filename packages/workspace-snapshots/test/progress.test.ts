import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { describe, expect, it } from "vitest";
import { type SnapshotProgress, createLocalSnapshotSandbox } from "../src/index.js";
import { localPlace } from "./support.js";
import { describeTree } from "./workspace-fixture.js";

const FOLDERS = 5;
const FILES_PER_FOLDER = 500;
const FILE_BYTES = 1000;
const BLOB_BYTES = 3 * 1024 * 1024;

/** Steps in the order they were first reported. */
const stepsOf = (reports: readonly SnapshotProgress[]) => [
  ...new Set(reports.map((report) => report.step)),
];

/** Entries and bytes never go back within one run. */
function expectMonotonic(reports: readonly SnapshotProgress[]): void {
  for (let index = 1; index < reports.length; index += 1) {
    const [before, after] = [reports[index - 1], reports[index]] as [
      SnapshotProgress,
      SnapshotProgress,
    ];
    expect(after.entries).toBeGreaterThanOrEqual(before.entries);
    expect(after.bytes).toBeGreaterThanOrEqual(before.bytes);
  }
}

describe("progress of a checkpoint and a restore", () => {
  it("counts entries and bytes done of their totals, step by step, ending at the totals", async () => {
    const store = createMemoryBlobStore();
    const sandbox = createLocalSnapshotSandbox();
    const source = await localPlace(store, "progress-source");
    const target = await localPlace(store, "progress-target");
    try {
      for (let folder = 0; folder < FOLDERS; folder += 1) {
        await mkdir(join(source.workspace, `f${folder}`));
        for (let file = 0; file < FILES_PER_FOLDER; file += 1)
          await writeFile(
            join(source.workspace, `f${folder}/${file}.txt`),
            `${folder}/${file}`.padEnd(FILE_BYTES, "."),
          );
      }
      await writeFile(join(source.workspace, "large.bin"), Buffer.alloc(BLOB_BYTES, 7));
      const total = FOLDERS * (FILES_PER_FOLDER + 1) + 1;
      const contentBytes = FOLDERS * FILES_PER_FOLDER * FILE_BYTES + BLOB_BYTES;

      const firstTree = await describeTree(source.workspace);
      const first: SnapshotProgress[] = [];
      const ref = await source.snapshots.checkpoint({
        sandbox,
        sessionId: "s",
        onProgress: (report) => first.push(report),
      });
      expect(ref.entries).toBe(total);
      expect(stepsOf(first)).toEqual(["list", "trees", "contents", "publish", "done"]);
      expectMonotonic(first);
      expect(first.at(-1)).toEqual({
        step: "done",
        entries: total,
        totalEntries: total,
        bytes: contentBytes,
        totalBytes: contentBytes,
      });
      // Reported along the way, not only at the ends.
      expect(first.some((report) => report.entries > 0 && report.entries < total)).toBe(true);
      expect(
        first.some(
          (report) => report.step === "contents" && report.bytes > 0 && report.bytes < contentBytes,
        ),
      ).toBe(true);

      // A later checkpoint: the unchanged entries are done once listed, the changed contents are its bytes.
      const changed = ["f0/1.txt", "f3/7.txt"];
      const newContent = (path: string) => `${path} holds a new content\n`;
      for (const path of changed) await writeFile(join(source.workspace, path), newContent(path));
      const changedBytes = changed.reduce((sum, path) => sum + newContent(path).length, 0);
      const second: SnapshotProgress[] = [];
      await source.snapshots.checkpoint({
        sandbox,
        sessionId: "s",
        onProgress: (report) => second.push(report),
      });
      expectMonotonic(second);
      const trees = second.find((report) => report.step === "trees");
      expect(trees?.totalEntries).toBe(total);
      expect(trees?.entries).toBeGreaterThanOrEqual(total - changed.length);
      expect(second.at(-1)).toMatchObject({
        step: "done",
        entries: total,
        bytes: changedBytes,
        totalBytes: changedBytes,
      });

      const prepared: SnapshotProgress[] = [];
      const restore = await target.snapshots.prepareRestore({
        sessionId: "s",
        id: ref.id,
        onProgress: (report) => prepared.push(report),
      });
      try {
        await restore.send(sandbox);
      } finally {
        await restore.dispose();
      }
      expect(stepsOf(prepared)).toEqual(["assemble", "send", "verify", "done"]);
      const assembled = prepared.filter((report) => report.step === "assemble");
      expectMonotonic(assembled);
      expect(assembled.some((report) => report.entries > 0 && report.entries < total)).toBe(true);
      // Sending starts once every entry is read and checked.
      const sent = prepared.filter((report) => report.step !== "assemble");
      expectMonotonic(sent);
      expect(sent[0]).toMatchObject({ entries: total, totalEntries: total, bytes: 0 });
      expect(sent.some((report) => report.bytes > 0 && report.bytes < restore.size)).toBe(true);
      expect(prepared.at(-1)).toEqual({
        step: "done",
        entries: total,
        totalEntries: total,
        bytes: restore.size,
        totalBytes: restore.size,
      });
      expect(await describeTree(target.workspace)).toEqual(firstTree);
    } finally {
      await source.dispose();
      await target.dispose();
    }
  });
});
