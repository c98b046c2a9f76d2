import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { describe, expect, it } from "vitest";
import { type SnapshotProgress, createLocalSnapshotSandbox } from "../src/index.js";
import { localPlace } from "./support.js";

/** Entries the listing found unchanged: what the trees step starts with done. */
function unchangedAtTrees(reports: SnapshotProgress[]): number | undefined {
  return reports.find((report) => report.step === "trees")?.entries;
}

describe("a verified restore", () => {
  it("leaves the listing cache a checkpoint of the same tree finds unchanged", async () => {
    const store = createMemoryBlobStore();
    const source = await localPlace(store, "restore-cache-source");
    const target = await localPlace(store, "restore-cache-target", { excludes: ["skipped"] });
    const sandbox = createLocalSnapshotSandbox();
    try {
      await mkdir(join(source.workspace, "src/deep"), { recursive: true });
      for (let index = 0; index < 20; index += 1)
        await writeFile(join(source.workspace, "src/deep", `f ${index}.txt`), `content ${index}`);
      await writeFile(join(source.workspace, "empty"), "");
      await symlink("src/deep", join(source.workspace, "link"));
      const taken = await source.snapshots.checkpoint({ sandbox, sessionId: "s" });
      await target.snapshots.restore({ sandbox, sessionId: "s", id: taken.id });
      // Excluded, so neither listed nor proven: the cache leaves it out as a checkpoint's listing does.
      await writeFile(join(target.workspace, "skipped"), "not in any snapshot");

      const reports: SnapshotProgress[] = [];
      const next = await target.snapshots.checkpoint({
        sandbox,
        sessionId: "s",
        onProgress: (progress) => reports.push(progress),
      });
      expect(next.parent).toBe(taken.id);
      expect(next.entries).toBe(taken.entries);
      // Every entry as the restore listed it: the cache is the capture's own listing of the proven tree.
      expect(unchangedAtTrees(reports)).toBe(taken.entries);
    } finally {
      await source.dispose();
      await target.dispose();
    }
  });
});
