import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { STALL_EXIT_CODE } from "../../../../vitest.stall-watchdog.js";
import { APP_DIR } from "./artefacts.js";

const script = join(APP_DIR, "..", "..", "scripts", "run-workerd-tests.mjs");
const directories: string[] = [];

/** Runs the script with a `vitest` on PATH that exits with `codes` in turn and records its arguments. */
function runWith(codes: readonly number[]) {
  const bin = mkdtempSync(join(tmpdir(), "oma-run-workerd-"));
  directories.push(bin);
  const fake = join(bin, "vitest");
  writeFileSync(
    fake,
    `#!/bin/sh\nn=$(cat "${bin}/count" 2>/dev/null || echo 0)\necho $((n + 1)) > "${bin}/count"\necho "$@" >> "${bin}/args"\nset -- ${codes.join(" ")}\nshift $n\nexit $1\n`,
  );
  chmodSync(fake, 0o755);
  const result = spawnSync(process.execPath, [script, "--reporter=dot"], {
    encoding: "utf8",
    timeout: 30_000,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}` },
  });
  return { result, runs: readFileSync(join(bin, "args"), "utf8").trim().split("\n") };
}

describe("scripts/run-workerd-tests.mjs", () => {
  afterEach(() => {
    for (const directory of directories.splice(0))
      rmSync(directory, { recursive: true, force: true });
  });

  it("runs the suite once more after a stall, passing the arguments on, and ends with the second run's code", () => {
    const { result, runs } = runWith([STALL_EXIT_CODE, 0]);
    expect(result.status).toBe(0);
    expect(runs).toEqual(["run --reporter=dot", "run --reporter=dot"]);
    expect(result.stderr).toContain(
      "the run stalled (exit 75); running the workerd suite once more",
    );
  });

  it("never reruns a run that failed, and gives up after a second stall", () => {
    const failed = runWith([1, 0]);
    expect(failed.result.status).toBe(1);
    expect(failed.runs).toHaveLength(1);
    const stalled = runWith([STALL_EXIT_CODE, STALL_EXIT_CODE, 0]);
    expect(stalled.result.status).toBe(STALL_EXIT_CODE);
    expect(stalled.runs).toHaveLength(2);
  });
});
