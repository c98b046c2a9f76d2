import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeWhileWritten } from "../src/checkpoint/sandbox-parts.js";

// The removal script is plain POSIX shell run by the sandbox; here it runs in /bin/sh against a folder that a
// writer keeps adding files to, the way a refused transfer's `split` filter does.
const exec = promisify(execFile);
let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "oma-scratch-removal-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("scratch folder removal", () => {
  it("removes a folder a writer keeps adding parts to, and the writer stops on the missing folder", async () => {
    const directory = join(root, ".oma-checkpoint-test");
    await mkdir(directory);
    // Writes small parts as fast as it can, at most 4,000 (16 MiB); never creates the folder, so it fails with 3
    // once the folder is gone, and ends with 4 if it never was.
    const script = `i=0; while [ $i -lt 4000 ]; do head -c 4096 /dev/zero > ${directory}/part-$i.partial || exit 3; i=$((i+1)); done; exit 4`;
    const writer = spawn("sh", ["-c", script], { stdio: "ignore" });
    const exited = new Promise<number | null>((resolve) =>
      writer.once("exit", (code) => resolve(code)),
    );
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      await exec("sh", ["-c", removeWhileWritten(directory)]);
      expect(existsSync(directory)).toBe(false);
      expect(await exited).toBe(3);
      expect(existsSync(directory)).toBe(false);
    } finally {
      writer.kill("SIGKILL");
    }
  });

  it("succeeds on a folder that is already gone", async () => {
    await exec("sh", ["-c", removeWhileWritten(join(root, "never-made"))]);
  });
});
