import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { APP_DIR } from "./artefacts.js";

describe("pnpm deploy:check (wrangler deploy --dry-run without Docker)", () => {
  it("validates the config, every binding and the bundle, and cleans up after itself", () => {
    const result = spawnSync(process.execPath, [join(APP_DIR, "scripts", "deploy-check.mjs")], {
      cwd: APP_DIR,
      encoding: "utf8",
      // Docker is never reached: a PATH without a docker binary must not matter.
      env: { ...process.env, WRANGLER_DOCKER_BIN: "/nonexistent/docker", PATH: `${join(APP_DIR, "node_modules", ".bin")}:${process.env.PATH ?? ""}` },
    });
    const output = `${result.stdout}\n${result.stderr}`;
    expect(result.status, output).toBe(0);
    for (const binding of ["env.ENVIRONMENT_RUNNER (EnvironmentRunner)", "env.WORK_RUNNER (WorkRunner)", "env.DB (oma-sandbox-worker)", "env.BACKUP_BUCKET"]) {
      expect(output).toContain(binding);
    }
    expect(output).toMatch(/deploy:check: config, bindings and bundle valid/);
    expect(existsSync(join(APP_DIR, ".wrangler", "deploy-check", "index.js"))).toBe(true);
    expect(existsSync(join(APP_DIR, ".wrangler-deploy-check.jsonc"))).toBe(false);
  }, 180_000);
});
