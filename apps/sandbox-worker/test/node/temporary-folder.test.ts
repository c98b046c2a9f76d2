import { existsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import setupTemporaryFolder from "../../../../vitest.temporary-folder.js";

const before = process.env.TMPDIR;
afterEach(() => {
  if (before === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = before;
});

it("gives a test run a temporary folder of its own and removes it, with what was left in it, when the run ends", () => {
  const outside = tmpdir();
  const teardown = setupTemporaryFolder();
  const folder = tmpdir();
  expect(folder).not.toBe(outside);
  expect(folder.startsWith(join(outside, "oma-test-run-"))).toBe(true);
  expect(process.env.TMPDIR).toBe(folder);
  writeFileSync(join(folder, "forgotten.txt"), "left by a test");
  teardown();
  expect(existsSync(folder)).toBe(false);
  expect(process.env.TMPDIR).toBe(before);
  expect(tmpdir()).toBe(outside);
});
