import { describe, expect, it } from "vitest";
import { readConfig } from "../../src/config.js";
import type { WorkerEnv } from "../../src/env.js";
import { testEnv } from "../support/api.js";

const bare = { Sandbox: testEnv.Sandbox, WORK_RUNNER: testEnv.WORK_RUNNER, ENVIRONMENT_RUNNER: testEnv.ENVIRONMENT_RUNNER, CLAIM_COORDINATOR: testEnv.CLAIM_COORDINATOR, DB: testEnv.DB, OUTPUTS_BUCKET: testEnv.OUTPUTS_BUCKET, BACKUP_BUCKET: testEnv.BACKUP_BUCKET };

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
    expect(readConfig({ ...bare })).toMatchObject({ workspaceId: "default", environmentId: "default", leaseTtlMs: 90_000, heartbeatIntervalMs: 30_000, orphanReapLimit: 50, localBackups: false, profiles: {}, logLevel: "info" });
    expect(readConfig({ ...bare, LEASE_TTL_MS: "6000", WORKSPACE_ID: "" }).heartbeatIntervalMs).toBe(2_000);
  });

  it("reads wrangler.jsonc's vars, PROFILES as an object", () => {
    const config = readConfig(testEnv);
    expect(config).toMatchObject({ environmentId: testEnv.TEST_ENVIRONMENT.environmentId, localBackups: true });
    expect(Object.keys(config.profiles).sort()).toEqual(["ama-worker", "hello"]);
    expect(config.profiles["ama-worker"]?.driver).toMatchObject({ type: "ama_worker", process: { command: "oma-ama-worker" } });
  });

  it("accepts PROFILES as JSON text, as a secret or a .dev.vars line would carry it", () => {
    const profiles = JSON.stringify({ quick: { workspace: { requirement: "ephemeral" }, outputs: { requirement: "disabled" }, runtimeCheckpoint: "disabled", driver: { type: "ama_worker", process: { command: "true" } } } });
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
    expect(configError(env)).toMatchObject({ code: "invalid_config", context: { field }, message: expect.stringMatching(new RegExp(`^${field}`)) });
  });
});
