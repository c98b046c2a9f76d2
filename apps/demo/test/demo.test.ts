import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));

/** Runs the built demo as `pnpm demo` does, with a small workspace, and returns its exit code and output. */
function runDemo(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, OMA_DEMO_DATA_MIB: "1" };
  for (const key of Object.keys(env)) if (key.startsWith("OMA_CLOUDFLARE_") || key.startsWith("R2_")) delete env[key];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("pnpm demo", () => {
  it("runs two work items of one session on the local stack and proves the workspace came back", async () => {
    const { code, stdout, stderr } = await runDemo();
    expect(stderr).not.toContain("demo failed");
    expect(code).toBe(0);
    expect(stdout).toMatch(/work item work-1 of demo-session-/);
    expect(stdout).toMatch(/fence\.acquire\s+\d+ ms/);
    expect(stdout).toMatch(/workspace\.checkpoint\s+\d+ ms/);
    expect(stdout).toMatch(/checkpoint wrc_[0-9a-f]+: archive sha256:[0-9a-f]{64}/);
    expect(stdout).toMatch(/report\.md/);
    expect(stdout).toMatch(/session revision 2/);
    expect(stdout).toMatch(/verified\.txt/);
  });
});
