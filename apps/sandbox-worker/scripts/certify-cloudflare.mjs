// `pnpm certify:cloudflare [--dry-run] [--keep]`: deploys a certification build of this Worker to the
// caller's Cloudflare account under a fresh name (its own D1 database and R2 buckets, `CERTIFICATION=true`),
// then, through the deployed Worker against real containers: runs the managed-runtime conformance suite
// inside the Worker (`POST /v1/certification/conformance`, one request per case), a smoke test of two
// work items of one session (the second must see the first's workspace, restored from an R2 backup), and,
// given a Managed Agents environment, one claimed-work item end to end. Prints the capability table and
// tears everything down. `--dry-run` checks the settings and the bundle (`deploy:check`) and prints the
// plan, touching nothing. Needs: CLOUDFLARE_API_TOKEN, CLOUDFLARE_ACCOUNT_ID, R2_ACCESS_KEY_ID,
// R2_SECRET_ACCESS_KEY, and Docker (wrangler builds the image); the claimed-work item also needs
// ANTHROPIC_API_KEY, CERTIFY_ENVIRONMENT_ID, CERTIFY_ENVIRONMENT_KEY and CERTIFY_AGENT_ID. Secrets go to
// wrangler on stdin, never on a command line.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const args = new Set(process.argv.slice(2));
const USAGE = `Usage: pnpm certify:cloudflare [--dry-run] [--keep]

Deploys a certification build of this Worker to your Cloudflare account under a fresh name (its own D1
database and R2 buckets), runs the managed-runtime conformance suite inside it against real containers, a
two-item smoke test (the second item restores the first's workspace from R2) and, given a Managed Agents
environment, one claimed work item; prints the capability table, then deletes everything it created.

  --dry-run   check the settings and the bundle (deploy:check) and print the plan; touches nothing
  --keep      leave the Worker, database and buckets in place after the run
  --help      print this text

Environment: CLOUDFLARE_API_TOKEN, CLOUDFLARE_ACCOUNT_ID, R2_ACCESS_KEY_ID, R2_SECRET_ACCESS_KEY (required
for a real run; Docker too, wrangler builds the image). The claimed work item also needs ANTHROPIC_API_KEY,
CERTIFY_ENVIRONMENT_ID, CERTIFY_ENVIRONMENT_KEY and CERTIFY_AGENT_ID. Secrets go to wrangler on stdin.

Exit status: 0 when every step passed, 1 when one failed, 2 for a usage error or missing settings.`;
const unknown = [...args].filter((arg) => !["--dry-run", "--keep", "--help", "-h"].includes(arg));
if (args.has("--help") || args.has("-h")) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
if (unknown.length > 0) {
  process.stderr.write(`certify:cloudflare: unknown option ${unknown.join(", ")}\n\n${USAGE}\n`);
  process.exit(2);
}
const dryRun = args.has("--dry-run");
const keep = args.has("--keep");
const REQUIRED = [
  "CLOUDFLARE_API_TOKEN",
  "CLOUDFLARE_ACCOUNT_ID",
  "R2_ACCESS_KEY_ID",
  "R2_SECRET_ACCESS_KEY",
];
const CLAIMED_WORK = [
  "ANTHROPIC_API_KEY",
  "CERTIFY_ENVIRONMENT_ID",
  "CERTIFY_ENVIRONMENT_KEY",
  "CERTIFY_AGENT_ID",
];

/** What a certification run establishes, and how. */
export const CAPABILITIES = [
  ["bundle, bindings, Durable Object migrations", "deploy:check and the real deploy"],
  [
    "container image builds and boots (cloudflare/sandbox + Node + oma-ama-worker)",
    "deploy, then the first work item's readiness probe",
  ],
  ["fenced work item on a real container", "smoke item 1 completes"],
  [
    "workspace backup to R2 through presigned URLs, restored into the next item",
    "smoke item 2 sees item 1's run",
  ],
  ["container stopped when its item ends", "runtime state of both items"],
  [
    "managed-runtime conformance suite, in the deployed Worker, on real containers",
    "POST /v1/certification/conformance, every case",
  ],
  [
    "claimed work: platform queue → cron/claim pass → EnvironmentRunner → container → completed",
    "one session of CERTIFY_AGENT_ID in CERTIFY_ENVIRONMENT_ID",
  ],
];

const name = `oma-cert-${randomBytes(4).toString("hex")}`;
const { CONFORMANCE_CASES } = await import("@open-managed-agents/managed-runtime-conformance");
const plan = [
  ["deploy:check", ["node", "scripts/deploy-check.mjs"]],
  ["create D1 database", ["wrangler", "d1", "create", name]],
  ["create R2 bucket (outputs)", ["wrangler", "r2", "bucket", "create", `${name}-outputs`]],
  ["create R2 bucket (backups)", ["wrangler", "r2", "bucket", "create", `${name}-backups`]],
  [
    "apply D1 migrations",
    [
      "wrangler",
      "d1",
      "migrations",
      "apply",
      "DB",
      "--remote",
      "--config",
      ".wrangler-certify.jsonc",
    ],
  ],
  ["deploy (builds the image)", ["wrangler", "deploy", "--config", ".wrangler-certify.jsonc"]],
  ["set secrets", ["wrangler", "secret", "bulk", "--config", ".wrangler-certify.jsonc"]],
];
const teardown = [
  ["delete Worker", ["wrangler", "delete", "--name", name, "--force"]],
  ["delete D1 database", ["wrangler", "d1", "delete", name, "--skip-confirmation"]],
  ["delete R2 bucket (outputs)", ["wrangler", "r2", "bucket", "delete", `${name}-outputs`]],
  ["delete R2 bucket (backups)", ["wrangler", "r2", "bucket", "delete", `${name}-backups`]],
];

function run(command, input) {
  const result = spawnSync(command[0], command.slice(1), {
    cwd: root,
    encoding: "utf8",
    input,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  if (result.error) throw result.error;
  if (result.status !== 0)
    throw new Error(
      `${command.slice(0, 3).join(" ")} exited ${result.status}: ${result.stderr.slice(-2000)}`,
    );
  return result.stdout;
}

function printTable(results) {
  process.stdout.write("\ncapability | established by | result\n--- | --- | ---\n");
  for (const [capability, by] of CAPABILITIES)
    process.stdout.write(`${capability} | ${by} | ${results.get(capability) ?? "not run"}\n`);
}

async function certificationConfig(databaseId, accountId) {
  const config = await readFile(join(root, "wrangler.jsonc"), "utf8");
  return config
    .replace(/"name": "oma-sandbox-worker"/, `"name": "${name}"`)
    .replace(/"database_name": "oma-sandbox-worker"/, `"database_name": "${name}"`)
    .replace(/"database_id": "[^"]*"/, `"database_id": "${databaseId}"`)
    .replace(/"bucket_name": "oma-sandbox-outputs"/, `"bucket_name": "${name}-outputs"`)
    .replace(/"bucket_name": "oma-sandbox-backups"/, `"bucket_name": "${name}-backups"`)
    .replace(/"BACKUP_BUCKET_NAME": "[^"]*"/, `"BACKUP_BUCKET_NAME": "${name}-backups"`)
    .replace(/"CLOUDFLARE_ACCOUNT_ID": "[^"]*"/, `"CLOUDFLARE_ACCOUNT_ID": "${accountId}"`)
    .replace(/"CERTIFICATION": "[^"]*"/, '"CERTIFICATION": "true"')
    .replace(
      /"ENVIRONMENT_ID": "[^"]*"/,
      `"ENVIRONMENT_ID": "${process.env.CERTIFY_ENVIRONMENT_ID ?? "certification"}"`,
    );
}

async function bearer(url, token, path, init = {}) {
  const response = await fetch(`${url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  });
  return { status: response.status, body: await response.json() };
}

/** Runs every conformance case through the deployed Worker, one request each, and prints its line. */
async function conformance(url, token, results) {
  const failed = [];
  process.stdout.write("\nconformance case | claimed | verified | result\n--- | --- | --- | ---\n");
  for (const entry of CONFORMANCE_CASES) {
    const { status, body } = await bearer(url, token, "/v1/certification/conformance", {
      method: "POST",
      body: JSON.stringify({ cases: [entry.id] }),
    });
    const outcome =
      status === 200
        ? body.cases.find((item) => item.id === entry.id)
        : { claimed: "?", verified: "?", result: `http ${status}`, error: body.error };
    process.stdout.write(
      `${entry.id} | ${outcome.claimed} | ${outcome.verified} | ${outcome.result}${outcome.error ? ` (${outcome.error.code ?? outcome.error.name}: ${outcome.error.message})` : ""}\n`,
    );
    if (outcome.result !== "pass") failed.push(entry.id);
  }
  results.set(CAPABILITIES[5][0], failed.length === 0 ? "pass" : `fail (${failed.join(", ")})`);
}

/** One session in the deployer's environment; the Worker claims its work item and runs it. */
async function claimedWork(url, token, results) {
  const { default: Anthropic } = await import("@anthropic-ai/sdk");
  const client = new Anthropic({ apiKey: process.env.ANTHROPIC_API_KEY });
  const session = await client.beta.sessions.create({
    agent: process.env.CERTIFY_AGENT_ID,
    environment_id: process.env.CERTIFY_ENVIRONMENT_ID,
    initial_events: [
      {
        type: "user.message",
        content: [
          {
            type: "text",
            text: "Run `echo certified > certify.txt && cat certify.txt` with the bash tool, then reply done.",
          },
        ],
      },
    ],
  });
  for (let attempt = 0; attempt < 120; attempt += 1) {
    // The webhook of a fresh certification Worker is not registered: a claim pass drains the queue.
    await bearer(url, token, "/v1/environment/claim", { method: "POST", body: "{}" });
    const { body } = await bearer(url, token, "/v1/environment/work?limit=100");
    const item = (body.data ?? []).find(
      (record) => record.sessionId === session.id && record.status !== "running",
    );
    if (item) {
      results.set(
        CAPABILITIES[6][0],
        item.status === "completed" ? "pass" : `fail (${item.status})`,
      );
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 5_000));
  }
  results.set(CAPABILITIES[6][0], "fail (no claimed item ended within 10 minutes)");
}

async function smoke(url, token, results) {
  const call = async (path, init = {}) => {
    const response = await fetch(`${url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    });
    return { status: response.status, body: await response.json() };
  };
  const ended = async (workId) => {
    for (let attempt = 0; attempt < 120; attempt += 1) {
      const { body } = await call(`/v1/sessions/certify/work/${workId}`);
      if (!["queued", "running"].includes(body.status)) return body;
      await new Promise((resolve) => setTimeout(resolve, 5_000));
    }
    throw new Error(`work item ${workId} did not end within 10 minutes`);
  };
  for (const workId of ["one", "two"])
    await call("/v1/sessions/certify/work", {
      method: "POST",
      body: JSON.stringify({ workId, profile: "hello" }),
    });
  const [one, two] = [await ended("one"), await ended("two")];
  results.set(
    CAPABILITIES[1][0],
    one.status === "completed" ? "pass" : `fail (${one.result?.error?.code ?? one.status})`,
  );
  results.set(CAPABILITIES[2][0], one.status === "completed" ? "pass" : "fail");
  results.set(CAPABILITIES[3][0], two.result?.revision === 2 ? "pass" : `fail (${two.status})`);
  results.set(
    CAPABILITIES[4][0],
    one.runtimeId && two.runtimeId && one.runtimeId !== two.runtimeId ? "pass" : "fail",
  );
}

const missing = REQUIRED.filter((variable) => !process.env[variable]);
if (dryRun) {
  run(plan[0][1]);
  process.stdout.write(
    `certify:cloudflare --dry-run: bundle valid; certification name would be ${name}\n`,
  );
  if (missing.length > 0)
    process.stdout.write(`a real run also needs: ${missing.join(", ")} (and Docker)\n`);
  const claimedMissing = CLAIMED_WORK.filter((variable) => !process.env[variable]);
  if (claimedMissing.length > 0)
    process.stdout.write(`the claimed-work item also needs: ${claimedMissing.join(", ")}\n`);
  process.stdout.write("plan:\n");
  const through = [
    ["smoke test: two work items of one session through the bearer API", ["fetch"]],
    [
      `conformance: ${CONFORMANCE_CASES.length} cases, one POST /v1/certification/conformance each`,
      ["fetch"],
    ],
    [
      "claimed work: one session in CERTIFY_ENVIRONMENT_ID, drained with POST /v1/environment/claim",
      ["fetch"],
    ],
  ];
  for (const [step, command] of [...plan, ...through, ...teardown]) {
    process.stdout.write(`  - ${step}: ${command.join(" ")}\n`);
  }
  printTable(new Map([[CAPABILITIES[0][0], "pass (deploy:check)"]]));
} else {
  if (missing.length > 0) {
    process.stderr.write(`certify:cloudflare needs ${missing.join(", ")} in the environment\n`);
    process.exit(2);
  }
  const results = new Map();
  const configPath = join(root, ".wrangler-certify.jsonc");
  const token = randomBytes(24).toString("hex");
  try {
    run(plan[0][1]);
    const created = run(plan[1][1]);
    const databaseId = /"?database_id"?\s*[:=]\s*"([0-9a-f-]{36})"/.exec(created)?.[1];
    if (!databaseId) throw new Error("wrangler d1 create printed no database_id");
    run(plan[2][1]);
    run(plan[3][1]);
    await writeFile(
      configPath,
      await certificationConfig(databaseId, process.env.CLOUDFLARE_ACCOUNT_ID),
    );
    run(plan[4][1]);
    const deployed = run(plan[5][1]);
    results.set(CAPABILITIES[0][0], "pass");
    const claimedReady = CLAIMED_WORK.every((variable) => process.env[variable]);
    const secrets = {
      API_TOKEN: token,
      R2_ACCESS_KEY_ID: process.env.R2_ACCESS_KEY_ID,
      R2_SECRET_ACCESS_KEY: process.env.R2_SECRET_ACCESS_KEY,
      ...(claimedReady
        ? {
            ENVIRONMENT_KEY: process.env.CERTIFY_ENVIRONMENT_KEY,
            WEBHOOK_SECRET: `whsec_${randomBytes(24).toString("base64")}`,
          }
        : {}),
    };
    run(plan[6][1], JSON.stringify(secrets));
    const url = /https:\/\/\S+\.workers\.dev/.exec(deployed)?.[0];
    if (!url) throw new Error("wrangler deploy printed no workers.dev URL");
    await smoke(url, token, results);
    await conformance(url, token, results);
    if (claimedReady) await claimedWork(url, token, results);
    else
      results.set(
        CAPABILITIES[6][0],
        `not run (needs ${CLAIMED_WORK.filter((variable) => !process.env[variable]).join(", ")})`,
      );
  } catch (error) {
    process.stderr.write(
      `certify:cloudflare: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exitCode = 1;
  } finally {
    if (!keep)
      for (const [, command] of teardown)
        spawnSync(command[0], command.slice(1), { cwd: root, stdio: "ignore" });
    await rm(configPath, { force: true });
    printTable(results);
  }
}
