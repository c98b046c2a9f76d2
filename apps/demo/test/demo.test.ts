import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { installedSdkVersion, sdkUnderTest } from "../../../scripts/sdk-matrix/versions.mjs";

const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
/** Makes the demo's SDK the one OMA_TEST_SDK names, as `pnpm start` does. */
const SDK_MATRIX_HOOK = fileURLToPath(
  new URL("../../../scripts/sdk-matrix/register.mjs", import.meta.url),
);

/** Runs the built demo as `pnpm demo` does, with a small workspace, and returns its exit code and output. */
function runDemo(
  extra: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, OMA_DEMO_DATA_MIB: "1", ...extra };
  for (const key of Object.keys(env))
    if (key.startsWith("OMA_CLOUDFLARE_") || key.startsWith("R2_")) delete env[key];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", SDK_MATRIX_HOOK, MAIN], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("pnpm demo", () => {
  it("runs one session's two turns through oma-environment-worker: the AMA worker in the sandbox, checkpoint, restore", async () => {
    const { code, stdout, stderr } = await runDemo();
    expect(stderr).not.toContain("demo failed");
    expect(stderr).not.toContain("demo refused");
    expect(code).toBe(0);
    expect(stdout).toMatch(/confined in bubblewrap/);
    const sdk = installedSdkVersion(sdkUnderTest()).replaceAll(".", "\\.");
    expect(
      stdout.match(
        new RegExp(
          `work item work_\\S+ of sesn_\\S+ \\(claimed by oma-environment-worker with the SDK's WorkPoller, @anthropic-ai/sdk ${sdk}\\)`,
          "g",
        ),
      ),
    ).toHaveLength(2);
    expect(
      stdout.match(
        new RegExp(
          `worker {2}oma-ama-worker \\S+ \\(ama-worker-v1\\) @anthropic-ai/sdk ${sdk} `,
          "g",
        ),
      ),
    ).toHaveLength(2);
    // The service is the bin, configured by variables, on the same SDK; its store is SQLite.
    expect(stdout).toMatch(
      /service {2}\S+\/environment-worker-service\/bin\/oma-environment-worker\.sh \(oma-environment-worker/,
    );
    expect(stdout).toMatch(
      new RegExp(
        `service {2}started: driver @open-managed-agents/managed-runtime-cloudflare-bridge, .*@anthropic-ai/sdk ${sdk}\n`,
      ),
    );
    expect(stdout).toMatch(/fences {3}SQLite \S+runtime\.sqlite/);
    // Its transaction steps, in order, and checkpoint and restore progress.
    expect(stdout).toMatch(
      /fence\.acquire\s+\d+ ms\n(.*\n)*?\s+sandbox\.acquire\s+\d+ ms\n(.*\n)*?\s+harnessDriver\.run\s+\d+ ms\n/,
    );
    expect(stdout).toMatch(/workspace\.checkpoint\s+\d+ ms/);
    expect(
      stdout.match(/checkpoint done: \S+ \S+ in \d+ objects, \d+ entries, \d+ ms/g),
    ).toHaveLength(2);
    expect(stdout).toMatch(/restore done: \S+ \S+ in \d+ objects, \d+ entries, \d+ ms/);
    expect(stdout).toMatch(/checkpoint wrc_[0-9a-f]+: archive sha256:[0-9a-f]{64}/);
    expect(stdout).toMatch(/report\.md/);
    expect(stdout).toMatch(/publish {2}session revision 2, generation 2/);
    expect(stdout.match(/result {3}completed in \d+\.\d s/g)).toHaveLength(2);
    // Stopped after the two items, by SIGTERM, which the service answers by exiting 0.
    expect(stdout).toMatch(/service stopping on SIGTERM(.*\n)+service stopped\n/);
    expect(stdout).toMatch(/verified\.txt/);
    // The transcript: turn 1's agent wrote in /workspace, turn 2's agent read it back.
    expect(stdout).toMatch(/turn 1 {2}write \/workspace\/notes\/plan\.md/);
    expect(stdout).toMatch(/\| \/workspace\n/);
    expect(stdout).toMatch(/turn 2 {2}read {2}\/workspace\/notes\/plan\.md\n\s+\| # Plan/);
    expect(stdout).toMatch(/\| data\.bin: OK/);
    expect(stdout).toMatch(/\| turn 2 found: hello from turn 1/);
  });

  it("refuses to run the agent's tool calls on an unconfined local runtime, saying why", async () => {
    const { code, stdout, stderr } = await runDemo({
      OMA_DEMO_LOCAL_CONFINEMENT: "unconfined-unsafe",
    });
    expect(code).toBe(2);
    expect(stderr).toMatch(/demo refused: .*not "bubblewrap".*would run on this machine/);
    expect(stdout).not.toMatch(/work item work_/);
    expect(stdout).not.toMatch(/service {2}/);
  });
});
