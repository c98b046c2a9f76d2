import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { buffer } from "node:stream/consumers";
import { describe, expect, it } from "vitest";
import { applyJoinPlan, extractArchive, packDirectory, splitArchive } from "../src/index.js";
import { writeRandomTree } from "./support/random-tree.js";
import { tempDir } from "./support/temp-dir.js";
import { snapshotTree } from "./support/tree-snapshot.js";

const SEEDS = Array.from({ length: 30 }, (_, index) => 1000 + index * 7919);
const BIG_FILE_BYTES = 200 * 1024;
/** Part sizes: two below the biggest file (so it is chunked) and one that holds everything. */
const PART_SIZES = [40 * 1024, 128 * 1024, 64 * 1024 * 1024];

describe("pack → split → extract round trip (seeded random trees)", () => {
  for (const seed of SEEDS) {
    it(`seed ${seed} restores byte for byte at every part size`, async () => {
      const base = await tempDir(`seed-${seed}`);
      const source = join(base, "source");
      await mkdir(source);
      await writeRandomTree(source, seed, BIG_FILE_BYTES);
      const expected = await snapshotTree(source);
      const packed = packDirectory(source);
      const archive = await buffer(packed.stream);
      const digest = await packed.digest;
      expect(digest.bytes).toBe(archive.length);

      const whole = join(base, "whole");
      await extractArchive(archive, whole);
      expect(await snapshotTree(whole, { directoryTimes: true })).toEqual(
        await snapshotTree(source, { directoryTimes: true }),
      );
      const archiveFile = join(base, "archive.tar");
      await writeFile(archiveFile, archive);
      const fromFile = join(base, "from-file");
      await extractArchive({ file: archiveFile }, fromFile);
      expect(await snapshotTree(fromFile)).toEqual(expected);

      for (const maxPartBytes of PART_SIZES) {
        const restored = join(base, `parts-${maxPartBytes}`);
        const split = splitArchive(archive, { maxPartBytes });
        let parts = 0;
        for await (const part of split) {
          expect(part.size).toBeLessThanOrEqual(maxPartBytes);
          expect(part.index).toBe(parts);
          await extractArchive(part.bytes, restored, {
            mode: part.index === 0 ? "replace" : "merge",
          });
          parts += 1;
        }
        for (const plan of split.joinPlans) await applyJoinPlan(restored, plan);
        expect(await snapshotTree(restored), `part size ${maxPartBytes}`).toEqual(expected);
      }
    });
  }
});
