/**
 * The `oma-environment-worker` launcher: it starts Node on the service with the process settings the README
 * names, found through a symlink as npm and pnpm install bins, and passes arguments and overrides through.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const LAUNCHER = fileURLToPath(new URL("../bin/oma-environment-worker.sh", import.meta.url));
const SERVICE = fileURLToPath(new URL("../dist/bin.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "oma-launcher-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A stand-in for the node binary (OMA_NODE) that reports the arguments and setting it was started with.
const reporter = join(dir, "node-reporter.sh");
writeFileSync(
  reporter,
  '#!/bin/sh\nprintf "%s\\n" "MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-}" "$@"\n',
);
chmodSync(reporter, 0o755);
const linked = join(dir, "oma-environment-worker");
symlinkSync(LAUNCHER, linked);

function launch(env: Record<string, string>, args: readonly string[] = []): string[] {
  const base = { ...process.env };
  for (const key of ["MALLOC_MMAP_THRESHOLD_", "OMA_NODE_ARGS", "OMA_NODE"]) delete base[key];
  return execFileSync(linked, [...args], {
    env: { ...base, OMA_NODE: reporter, ...env },
    encoding: "utf8",
  })
    .trimEnd()
    .split("\n");
}

describe("the oma-environment-worker launcher", () => {
  it("passes shellcheck", () => {
    const result = spawnSync("shellcheck", [LAUNCHER], { encoding: "utf8" });
    expect(result.error).toBeUndefined();
    expect(result.stdout + result.stderr).toBe("");
    expect(result.status).toBe(0);
  });

  it("starts the service with its settings, through a symlink, with the arguments as given", () => {
    expect(launch({}, ["--check", "a b"])).toEqual([
      "MALLOC_MMAP_THRESHOLD_=65536",
      "--max-semi-space-size=2",
      "--heap-growing-percent=30",
      SERVICE,
      "--check",
      "a b",
    ]);
  });

  it("keeps an operator's own settings", () => {
    expect(
      launch({
        MALLOC_MMAP_THRESHOLD_: "131072",
        OMA_NODE_ARGS: "--max-semi-space-size=4 --trace-gc",
      }),
    ).toEqual(["MALLOC_MMAP_THRESHOLD_=131072", "--max-semi-space-size=4", "--trace-gc", SERVICE]);
    expect(launch({ OMA_NODE_ARGS: "" })).toEqual(["MALLOC_MMAP_THRESHOLD_=65536", SERVICE]);
  });

  it("runs the real service on Node, which answers --help", () => {
    const usage = execFileSync(linked, ["--help"], {
      env: { ...process.env, OMA_NODE: process.execPath },
      encoding: "utf8",
    });
    expect(usage).toMatch(/^oma-environment-worker \[run\]/);
    // The manifest's bin is the launcher, which the published files carry.
    const manifest = JSON.parse(
      readFileSync(new URL("../package.json", import.meta.url), "utf8"),
    ) as {
      bin: Record<string, string>;
      files: string[];
    };
    expect(manifest.bin["oma-environment-worker"]).toBe("./bin/oma-environment-worker.sh");
    expect(manifest.files).toContain("bin");
  });
});
