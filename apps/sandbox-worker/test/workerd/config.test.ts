import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { readConfig } from "../../src/config.js";
import type { WorkerEnv } from "../../src/env.js";
import worker from "../../src/index.js";
import { ORIGIN, TOKEN, testEnv } from "../support/api.js";

const bare = {
  Sandbox: testEnv.Sandbox,
  WORK_RUNNER: testEnv.WORK_RUNNER,
  ENVIRONMENT_RUNNER: testEnv.ENVIRONMENT_RUNNER,
  CLAIM_COORDINATOR: testEnv.CLAIM_COORDINATOR,
  DB: testEnv.DB,
  OUTPUTS_BUCKET: testEnv.OUTPUTS_BUCKET,
  BACKUP_BUCKET: testEnv.BACKUP_BUCKET,
};

function configError(env: Partial<WorkerEnv>): unknown {
  try {
    readConfig({ ...bare, ...env });
  } catch (error) {
    return error;
  }
  return null;
}

describe("settings from the Worker environment", () => {
  it("applies defaults, and derives the heartbeat from the lease", () => {
    expect(readConfig({ ...bare })).toMatchObject({
      workspaceId: "default",
      environmentId: "default",
      leaseTtlMs: 90_000,
      heartbeatIntervalMs: 30_000,
      orphanReapLimit: 50,
      localBackups: false,
      profiles: {},
      logLevel: "info",
    });
    expect(
      readConfig({ ...bare, LEASE_TTL_MS: "6000", WORKSPACE_ID: "" }).heartbeatIntervalMs,
    ).toBe(2_000);
  });

  it("reads wrangler.jsonc's vars, PROFILES as an object", () => {
    const config = readConfig(testEnv);
    expect(config).toMatchObject({
      environmentId: testEnv.TEST_ENVIRONMENT.environmentId,
      localBackups: true,
    });
    expect(Object.keys(config.profiles).sort()).toEqual(["ama-worker", "hello"]);
    expect(config.profiles["ama-worker"]?.driver).toMatchObject({
      type: "ama_worker",
      process: { command: "oma-ama-worker" },
    });
  });

  it("accepts PROFILES as JSON text, as a secret or a .dev.vars line would carry it", () => {
    const profiles = JSON.stringify({
      quick: {
        workspace: { requirement: "ephemeral" },
        outputs: { requirement: "disabled" },
        runtimeCheckpoint: "disabled",
        driver: { type: "ama_worker", process: { command: "true" } },
      },
    });
    expect(Object.keys(readConfig({ ...bare, PROFILES: profiles }).profiles)).toEqual(["quick"]);
  });

  it.each([
    ["LEASE_TTL_MS", { LEASE_TTL_MS: "soon" }],
    ["LEASE_TTL_MS", { LEASE_TTL_MS: "100" }],
    ["ORPHAN_REAP_LIMIT", { ORPHAN_REAP_LIMIT: "5000" }],
    ["WORKSPACE_ID", { WORKSPACE_ID: "has space" }],
    ["SANDBOX_LOCAL_BACKUPS", { SANDBOX_LOCAL_BACKUPS: "yes" }],
    ["CONTROL_PLANE_BASE_URL", { CONTROL_PLANE_BASE_URL: "not a url" }],
    ["PROFILES", { PROFILES: "{not json" }],
    ["LOG_LEVEL", { LOG_LEVEL: "verbose" }],
  ])("refuses a bad %s as invalid_config naming it", (field, env) => {
    expect(configError(env)).toMatchObject({
      code: "invalid_config",
      context: { field },
      message: expect.stringMatching(new RegExp(`^${field}`)),
    });
  });
});

describe("a bad setting and the health check over HTTP", () => {
  async function fetchWith(
    path: string,
    env: Partial<WorkerEnv>,
    init: RequestInit = {},
  ): Promise<Response> {
    const headers = {
      authorization: `Bearer ${TOKEN}`,
      ...(init.headers as Record<string, string> | undefined),
    };
    return worker.fetch(
      new Request(`${ORIGIN}${path}`, { ...init, headers }),
      { ...testEnv, ...env },
      createExecutionContext(),
    );
  }

  it("names the range for a negative LEASE_TTL_MS", () => {
    expect(configError({ LEASE_TTL_MS: "-5" })).toMatchObject({
      code: "invalid_config",
      context: { field: "LEASE_TTL_MS" },
      message: "LEASE_TTL_MS must be a whole number from 3000 to 3600000",
    });
  });

  it.each([
    ["GET", "/v1/sessions/s/work/w"],
    ["GET", "/v1/cost/capabilities"],
    ["POST", "/v1/sessions/s/work"],
  ])("refuses %s %s with the config error while a setting is bad", async (method, path) => {
    const response = await fetchWith(
      path,
      { LEASE_TTL_MS: "-5" },
      { method, body: method === "POST" ? "{}" : null },
    );
    const body = (await response.json()) as {
      error: { code: string; message: string; context?: unknown };
    };
    expect(body.error).toMatchObject({
      code: "invalid_config",
      context: { field: "LEASE_TTL_MS" },
    });
  });

  it("answers a claim pass without ENVIRONMENT_KEY with invalid_config naming it", async () => {
    const response = await fetchWith(
      "/v1/environment/claim",
      { ENVIRONMENT_KEY: "" },
      { method: "POST" },
    );
    const body = (await response.json()) as {
      error: { code: string; message: string; context?: unknown };
    };
    expect(body.error).toMatchObject({
      code: "invalid_config",
      context: { field: "ENVIRONMENT_KEY" },
    });
    expect(body.error.message).toMatch(/^ENVIRONMENT_KEY /);
    expect(body.error.message).not.toContain("Error");
  });

  it("serves /health without a credential: ok, or 503 with the setting that refuses the other routes", async () => {
    const healthy = await worker.fetch(
      new Request(`${ORIGIN}/health`),
      testEnv,
      createExecutionContext(),
    );
    expect(healthy.status).toBe(200);
    expect(await healthy.json()).toEqual({ status: "ok" });
    const badSetting = await worker.fetch(
      new Request(`${ORIGIN}/health`),
      { ...testEnv, LOG_LEVEL: "verbose" },
      createExecutionContext(),
    );
    expect(badSetting.status).toBe(503);
    expect(await badSetting.json()).toMatchObject({
      status: "unhealthy",
      error: { code: "invalid_config", context: { field: "LOG_LEVEL" } },
    });
    const noToken = await worker.fetch(
      new Request(`${ORIGIN}/health`),
      { ...testEnv, API_TOKEN: "" },
      createExecutionContext(),
    );
    expect(noToken.status).toBe(503);
    expect(await noToken.json()).toMatchObject({
      error: { code: "invalid_config", context: { field: "API_TOKEN" } },
    });
    expect(
      (
        await worker.fetch(
          new Request(`${ORIGIN}/health`, { method: "POST" }),
          testEnv,
          createExecutionContext(),
        )
      ).status,
    ).toBe(405);
  });
});
