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
    // Writes parts as fast as it can; never creates the folder, so it fails once the folder is gone.
    const writer = spawn("sh", ["-c", `i=0; while :; do head -c 65536 /dev/zero > ${directory}/part-$i.partial || exit 3; i=$((i+1)); done`], { stdio: "ignore" });
    const exited = new Promise<number | null>((resolve) => writer.once("exit", (code) => resolve(code)));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await exec("sh", ["-c", removeWhileWritten(directory)]);
    expect(existsSync(directory)).toBe(false);
    expect(await exited).toBe(3);
    expect(existsSync(directory)).toBe(false);
  });

  it("succeeds on a folder that is already gone", async () => {
    await exec("sh", ["-c", removeWhileWritten(join(root, "never-made"))]);
  });
});
