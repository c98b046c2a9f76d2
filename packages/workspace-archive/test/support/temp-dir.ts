import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { removeTree } from "../../src/remove-tree.js";

const created: string[] = [];

/** A fresh temporary folder, removed after the current test. */
export async function tempDir(label = "archive"): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `oma-${label}-`));
  created.push(dir);
  return dir;
}

afterEach(async () => {
  await Promise.all(created.splice(0).map((dir) => removeTree(dir)));
});
