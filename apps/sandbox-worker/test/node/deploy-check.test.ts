import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { APP_DIR } from "./artefacts.js";
// @ts-expect-error the script is plain JavaScript without declarations
import { PLACEHOLDER_DATABASE_ID, SECRETS, deployTodo } from "../../scripts/deploy-todo.mjs";

interface Step {
  readonly what: string;
  readonly how: string;
}
const left = deployTodo as (
  config: unknown,
  options: { dockerOnPath: boolean },
) => { todo: Step[]; confirm: Step[] };

describe("what deploy:check says is left before a real deploy", () => {
  const ready = {
    vars: {
      CLOUDFLARE_ACCOUNT_ID: "0123456789abcdef",
      ENVIRONMENT_ID: "env_01",
      SANDBOX_LOCAL_BACKUPS: "false",
    },
    d1_databases: [
      { binding: "DB", database_name: "oma", database_id: "2f1c1b4e-0000-4000-8000-1234567890ab" },
    ],
    r2_buckets: [{ binding: "OUTPUTS_BUCKET", bucket_name: "outputs" }],
  };

  it("lists nothing to do for a filled-in config on a machine with Docker, and still asks to confirm the account's part", () => {
    const { todo, confirm } = left(ready, { dockerOnPath: true });
    expect(todo).toEqual([]);
    expect(confirm.map((step) => step.how)).toEqual([
      ...(SECRETS as [string, string][]).map(([name]) => `wrangler secret put ${name}`),
      "wrangler r2 bucket create outputs",
      "pnpm migrate:remote",
    ]);
  });

  it("names the placeholder database id, an empty account id, a placeholder environment id and a missing Docker", () => {
    const config = {
      ...ready,
      vars: { ...ready.vars, CLOUDFLARE_ACCOUNT_ID: "", ENVIRONMENT_ID: "production" },
      d1_databases: [{ ...ready.d1_databases[0], database_id: PLACEHOLDER_DATABASE_ID }],
    };
    const { todo } = left(config, { dockerOnPath: false });
    expect(todo.map((step) => step.what)).toEqual([
      `d1_databases DB: database_id is the placeholder ${PLACEHOLDER_DATABASE_ID}`,
      "vars.CLOUDFLARE_ACCOUNT_ID is empty: presigned workspace backups need it",
      'vars.ENVIRONMENT_ID is "production", not a Managed Agents environment id (env_…)',
      "no docker on PATH: wrangler deploy builds ./Dockerfile with Docker",
    ]);
  });

  it("needs no account id when backups go through the binding", () => {
    expect(
      left(
        {
          ...ready,
          vars: { ...ready.vars, CLOUDFLARE_ACCOUNT_ID: "", SANDBOX_LOCAL_BACKUPS: "true" },
        },
        { dockerOnPath: true },
      ).todo,
    ).toEqual([]);
  });
});

describe("pnpm deploy:check (wrangler deploy --dry-run without Docker)", () => {
  it("validates the config, every binding and the bundle, and cleans up after itself", () => {
    const result = spawnSync(process.execPath, [join(APP_DIR, "scripts", "deploy-check.mjs")], {
      cwd: APP_DIR,
      encoding: "utf8",
      // Docker is never reached: a PATH without a docker binary must not matter.
      env: {
        ...process.env,
        WRANGLER_DOCKER_BIN: "/nonexistent/docker",
        PATH: `${join(APP_DIR, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
      },
    });
    const output = `${result.stdout}\n${result.stderr}`;
    expect(result.status, output).toBe(0);
    for (const binding of [
      "env.ENVIRONMENT_RUNNER (EnvironmentRunner)",
      "env.WORK_RUNNER (WorkRunner)",
      "env.DB (oma-sandbox-worker)",
      "env.BACKUP_BUCKET",
    ]) {
      expect(output).toContain(binding);
    }
    expect(output).toMatch(/deploy:check: config, bindings and bundle valid/);
    // The repository's wrangler.jsonc holds placeholders: the dry run passes, and says what is left.
    expect(result.stdout).toMatch(
      /still to do before a real deploy \(\d+\):\n\s+1\. d1_databases DB: database_id is the placeholder/,
    );
    expect(result.stdout).toContain("vars.CLOUDFLARE_ACCOUNT_ID is empty");
    expect(result.stdout).toContain("wrangler secret put ENVIRONMENT_KEY");
    expect(existsSync(join(APP_DIR, ".wrangler", "deploy-check", "index.js"))).toBe(true);
    expect(existsSync(join(APP_DIR, ".wrangler-deploy-check.jsonc"))).toBe(false);
  }, 180_000);
});
