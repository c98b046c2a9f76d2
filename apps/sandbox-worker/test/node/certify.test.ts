import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { APP_DIR } from "./artefacts.js";

const script = join(APP_DIR, "scripts", "certify-cloudflare.mjs");
const env = (extra: Record<string, string | undefined>) => {
  const base: Record<string, string | undefined> = {
    ...process.env,
    PATH: `${join(APP_DIR, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
  };
  for (const name of [
    "CLOUDFLARE_API_TOKEN",
    "CLOUDFLARE_ACCOUNT_ID",
    "R2_ACCESS_KEY_ID",
    "R2_SECRET_ACCESS_KEY",
    "ANTHROPIC_API_KEY",
    "CERTIFY_ENVIRONMENT_ID",
    "CERTIFY_ENVIRONMENT_KEY",
    "CERTIFY_AGENT_ID",
  ])
    delete base[name];
  return { ...base, ...extra };
};

describe("pnpm certify:cloudflare", () => {
  it("--dry-run validates the bundle, prints the plan and the capability table, and names what a real run needs", () => {
    const result = spawnSync(process.execPath, [script, "--dry-run"], {
      cwd: APP_DIR,
      encoding: "utf8",
      env: env({}),
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/bundle valid; certification name would be oma-cert-[0-9a-f]{8}/);
    expect(result.stdout).toContain(
      "a real run also needs: CLOUDFLARE_API_TOKEN, CLOUDFLARE_ACCOUNT_ID, R2_ACCESS_KEY_ID, R2_SECRET_ACCESS_KEY",
    );
    for (const step of [
      "wrangler d1 create",
      "wrangler deploy --config",
      "wrangler delete --name",
      "wrangler r2 bucket delete",
    ])
      expect(result.stdout).toContain(step);
    expect(result.stdout).toMatch(
      /bundle, bindings, Durable Object migrations \| .* \| pass \(deploy:check\)/,
    );
    expect(result.stdout).toMatch(/fenced work item on a real container \| .* \| not run/);
    // The conformance suite runs through the deployed Worker, one request per case, and a claimed item end to end.
    expect(result.stdout).toMatch(
      /conformance: \d{2} cases, one POST \/v1\/certification\/conformance each/,
    );
    expect(result.stdout).toMatch(
      /managed-runtime conformance suite, in the deployed Worker, on real containers \| .* \| not run/,
    );
    expect(result.stdout).toContain(
      "the claimed-work item also needs: ANTHROPIC_API_KEY, CERTIFY_ENVIRONMENT_ID, CERTIFY_ENVIRONMENT_KEY, CERTIFY_AGENT_ID",
    );
  }, 180_000);

  it("--help prints what it does, its options, what it needs and its exit status; an unknown option exits 2", () => {
    const help = spawnSync(process.execPath, [script, "--help"], {
      cwd: APP_DIR,
      encoding: "utf8",
      env: env({}),
    });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: pnpm certify:cloudflare \[--dry-run\] \[--keep\]/);
    for (const text of ["--dry-run", "--keep", "CLOUDFLARE_API_TOKEN", "Exit status"])
      expect(help.stdout).toContain(text);
    const unknown = spawnSync(process.execPath, [script, "--dryrun"], {
      cwd: APP_DIR,
      encoding: "utf8",
      env: env({}),
    });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("unknown option --dryrun");
  });

  it("refuses a real run without the account settings, before touching anything", () => {
    const result = spawnSync(process.execPath, [script], {
      cwd: APP_DIR,
      encoding: "utf8",
      env: env({ CLOUDFLARE_API_TOKEN: "x" }),
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(
      "needs CLOUDFLARE_ACCOUNT_ID, R2_ACCESS_KEY_ID, R2_SECRET_ACCESS_KEY",
    );
    expect(result.stderr).not.toContain("x\n");
  });
});
