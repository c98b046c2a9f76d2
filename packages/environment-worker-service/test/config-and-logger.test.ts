import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServiceLogger } from "../src/logging/logger.js";
import { loadServiceConfig, loadStoreUrl } from "../src/config/load-config.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "oma-service-config-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const base = {
  OMA_ENVIRONMENT_ID: "env_1",
  OMA_ENVIRONMENT_KEY: "environment-key-value",
  OMA_STORE: "sqlite:///tmp/a.sqlite",
};

describe("loadServiceConfig", () => {
  it("takes flags over the environment over the config file, and applies defaults", async () => {
    const file = join(dir, "config.json");
    await writeFile(
      file,
      JSON.stringify({ concurrency: 2, pollIntervalMs: 5000, workspaceId: "from-file" }),
    );
    const { config, secrets } = loadServiceConfig({
      flags: { concurrency: "4" },
      env: { ...base, OMA_CONCURRENCY: "3", OMA_POLL_INTERVAL_MS: "7000" },
      configFile: file,
    });
    expect(config).toMatchObject({
      concurrency: 4,
      pollIntervalMs: 7000,
      workspaceId: "from-file",
      apiBaseUrl: "https://api.anthropic.com",
    });
    expect(config.driver).toBe("@open-managed-agents/managed-runtime-cloudflare-bridge");
    expect(secrets).toEqual(["environment-key-value"]);
  });

  it("refuses an unknown config-file key and a heartbeat not shorter than the TTL, naming each", async () => {
    const file = join(dir, "unknown.json");
    await writeFile(file, JSON.stringify({ concurency: 2 }));
    expect(() => loadServiceConfig({ env: base, configFile: file })).toThrow(
      /invalid config concurency \(config file .*\): is not a setting/,
    );
    expect(() =>
      loadServiceConfig({
        env: { ...base, OMA_LEASE_TTL_MS: "1000", OMA_FENCE_HEARTBEAT_MS: "1000" },
      }),
    ).toThrow(
      "invalid config fenceHeartbeatMs (OMA_FENCE_HEARTBEAT_MS): must be shorter than leaseTtlMs",
    );
  });

  it("holds the lease while the sandbox is prepared unless OMA_LEASE_WHILE_PREPARING says false", () => {
    expect(loadServiceConfig({ env: base }).config.leaseWhilePreparing).toBe(true);
    expect(
      loadServiceConfig({ env: { ...base, OMA_LEASE_WHILE_PREPARING: "false" } }).config
        .leaseWhilePreparing,
    ).toBe(false);
    expect(() =>
      loadServiceConfig({ env: { ...base, OMA_LEASE_WHILE_PREPARING: "sometimes" } }),
    ).toThrow(/leaseWhilePreparing \(OMA_LEASE_WHILE_PREPARING\): must be true or false/);
  });

  it("reads the store URL alone for the operator CLI, without the environment key", () => {
    expect(loadStoreUrl({ env: { OMA_STORE: "sqlite:///var/lib/oma/r.sqlite" } })).toBe(
      "sqlite:///var/lib/oma/r.sqlite",
    );
    expect(() => loadStoreUrl({ env: {} })).toThrow("invalid config store (OMA_STORE)");
  });
});

describe("createServiceLogger", () => {
  const capture = () => {
    const chunks: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        chunks.push(String(chunk));
        done();
      },
    });
    return { destination, text: () => chunks.join("") };
  };

  it("writes JSON lines with every known credential redacted, the SDK's lines included", () => {
    const out = capture();
    const logger = createServiceLogger({
      level: "info",
      format: "json",
      secrets: ["environment-key-value"],
      env: {
        OMA_CLOUDFLARE_BRIDGE_API_KEY: "bridge-api-key-value",
        AWS_SECRET_ACCESS_KEY: "aws-secret-value",
        HOME: "/root",
      },
      destination: out.destination,
    });
    logger.addSecrets(["sessions-token-value"]);
    logger.host.info("work.claimed", {
      note: "key environment-key-value and bridge-api-key-value",
      list: ["aws-secret-value"],
    });
    logger.sdk.warn("poll failed, backing off", { error: "Bearer sessions-token-value refused" });
    logger.flush();
    const lines = out
      .text()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      level: 30,
      event: "work.claimed",
      note: "key [redacted] and [redacted]",
      list: ["[redacted]"],
    });
    expect(lines[1]).toMatchObject({ level: 40, event: "sdk.log" });
    expect(String(lines[1]?.message)).toContain("Bearer [redacted] refused");
    for (const secret of [
      "environment-key-value",
      "bridge-api-key-value",
      "aws-secret-value",
      "sessions-token-value",
    ])
      expect(out.text()).not.toContain(secret);
  });

  it("writes readable lines in pretty mode", () => {
    const out = capture();
    const logger = createServiceLogger({
      level: "info",
      format: "pretty",
      secrets: [],
      destination: out.destination,
    });
    logger.host.warn("service.stopping", { signal: "SIGTERM" });
    logger.flush();
    expect(out.text()).toContain("service.stopping");
    expect(() => JSON.parse(out.text())).toThrow();
  });
});
