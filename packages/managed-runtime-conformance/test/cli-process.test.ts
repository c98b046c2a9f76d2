import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

// The built CLI in its own Node process, as CI runs it: it must exit by itself, whatever the driver leaves.
const cliPath = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
const modulePath = fileURLToPath(
  new URL("./fixtures/terminate-throws-module.mjs", import.meta.url),
);
const rootDir = mkdtempSync(join(tmpdir(), "openma-conformance-cli-process-"));
afterAll(() => rmSync(rootDir, { recursive: true, force: true }));

interface Exit {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI; a CLI that does not exit by itself is killed after `killAfterMs` and shows as a signal. */
function runCli(fault: string, args: readonly string[], killAfterMs: number): Promise<Exit> {
  const options = join(rootDir, `${fault}.json`);
  writeFileSync(
    options,
    JSON.stringify({ fault, rootDir: mkdtempSync(join(rootDir, `${fault}-`)) }),
  );
  const argv = [
    cliPath,
    "--module",
    modulePath,
    "--provider",
    "conformance-reference",
    "--factory-options",
    options,
    ...args,
  ];
  const child = spawn(process.execPath, argv, {
    env: { ...process.env, NODE_ENV: "test" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const killer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
  return new Promise((resolve) => {
    child.on("close", (status, signal) => {
      clearTimeout(killer);
      resolve({ status, signal, stdout, stderr });
    });
  });
}

describe("oma-conformance as a process", () => {
  it("exits 1 when a driver's terminate throws, reaps the runtimes left running and names the thrown error", async () => {
    const cases = ["lifecycle.heartbeat-lost", "lifecycle.terminate-idempotent"].flatMap((id) => [
      "--case",
      id,
    ]);
    const exit = await runCli("terminate-throws", [...cases, "--timeout", "240"], 300_000);
    expect(exit.signal).toBeNull();
    expect(exit.stderr).toBe("");
    expect(exit.status).toBe(1);
    expect(exit.stdout).toContain("FAILED: 0 pass, 2 fail, 22 not-run");
    expect(exit.stdout).toMatch(
      /^lifecycle\.heartbeat-lost: ConformanceFailure: .*left an orphan.*terminate exploded: the provider answered 500/m,
    );
    expect(exit.stdout).toMatch(/^lifecycle\.terminate-idempotent: .*terminate exploded/m);
    expect(exit.stdout).toMatch(/^\d+ runtimes? left running by the cases, reaped after the run$/m);
    expect(exit.stdout).not.toContain("not reaped");
  }, 320_000);

  it("exits 1 once --timeout passes, failing the case that was running and skipping the rest", async () => {
    const exit = await runCli(
      "acquire-hangs",
      [
        "--case",
        "lifecycle.lease-json-safe",
        "--case",
        "lifecycle.heartbeat-lost",
        "--timeout",
        "3",
      ],
      120_000,
    );
    expect(exit.signal).toBeNull();
    expect(exit.status).toBe(1);
    expect(exit.stdout).toContain("FAILED: 0 pass, 1 fail, 23 not-run");
    expect(exit.stdout).toMatch(
      /^lifecycle\.lease-json-safe: ConformanceFailure: case lifecycle\.lease-json-safe was stopped: the run's deadline passed/m,
    );
  }, 140_000);

  it("refuses a --timeout that is not a positive number of seconds", async () => {
    const exit = await runCli("terminate-throws", ["--timeout", "soon"], 60_000);
    expect(exit.status).toBe(2);
    expect(exit.stderr).toContain("--timeout takes a positive number of seconds, not soon");
  }, 70_000);
});
