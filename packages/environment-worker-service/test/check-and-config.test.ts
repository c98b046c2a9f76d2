import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ServiceStack,
  makeReadOnly,
  sample,
  startServiceStack,
} from "./support/service-stack.js";

let stack: ServiceStack;

beforeAll(async () => {
  stack = await startServiceStack();
});

afterAll(async () => {
  await stack?.close();
});

const profileWith = (command: string) =>
  JSON.stringify({
    workspace: { requirement: "durable" },
    outputs: { requirement: "disabled" },
    runtimeCheckpoint: "disabled",
    driver: { type: "ama_worker", process: { command } },
  });

describe("a wrong config", () => {
  it("names the missing key and where it is read from", async () => {
    const result = await stack.run([], { OMA_ENVIRONMENT_ID: undefined });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "invalid config environmentId (OMA_ENVIRONMENT_ID): is required",
    );
  });

  it("names a malformed key from a flag, the environment and the config file, never echoing its value", async () => {
    const flag = await stack.run(["--concurrency", "many"]);
    expect(flag.stderr).toContain(
      "invalid config concurrency (--concurrency): must be a whole number",
    );
    const env = await stack.run([], { OMA_API_BASE_URL: "ftp://secret-host-name" });
    expect(env.stderr).toContain("invalid config apiBaseUrl (OMA_API_BASE_URL)");
    expect(env.stderr).not.toContain("secret-host-name");
    const file = join(stack.dir, "bad.json");
    await writeFile(file, JSON.stringify({ leaseTtlMs: -5, store: "sqlite:///tmp/x.sqlite" }));
    const fromFile = await stack.run(["--config", file], { OMA_STORE: undefined });
    expect(fromFile.stderr).toContain(`invalid config leaseTtlMs (config file ${file})`);
    expect(fromFile.code).toBe(2);
  });

  it("refuses a secret in the config file, and reads one from a file", async () => {
    const file = join(stack.dir, "secret.json");
    await writeFile(file, JSON.stringify({ environmentKey: "in-the-file" }));
    const refused = await stack.run(["--config", file, "--check"]);
    expect(refused.stderr).toContain("invalid config environmentKey");
    expect(refused.stderr).toContain(
      "is a secret: set OMA_ENVIRONMENT_KEY or OMA_ENVIRONMENT_KEY_FILE",
    );
    expect(refused.stderr).not.toContain("in-the-file");
    const keyFile = join(stack.dir, "key");
    await writeFile(keyFile, `${stack.environment.environmentKey}\n`, { mode: 0o600 });
    const fromFile = await stack.run(["--check", "--environment-key-file", keyFile], {
      OMA_ENVIRONMENT_KEY: undefined,
    });
    expect(fromFile.stdout).toMatch(/^ok {4}api/m);
  });

  it("refuses a store URL of a scheme it has no store for, naming the ones it has", async () => {
    const result = await stack.run([], { OMA_STORE: "mysql://db.internal/runtime" });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "invalid config store: unsupported scheme mysql:; use sqlite: or postgres:",
    );
  });
});

describe("--check", () => {
  it("proves the API, the store, the driver and a sandbox's readiness, and exits 0", async () => {
    const result = await stack.run(["--check"]);
    expect(result.stdout).toMatch(/^ok {4}config/m);
    expect(result.stdout).toMatch(/^ok {4}api +.*answered the environment key/m);
    expect(result.stdout).toMatch(/^ok {4}store +SQLite .* is writable/m);
    expect(result.stdout).toMatch(
      /^ok {4}driver +@open-managed-agents\/managed-runtime-cloudflare-bridge loaded \(provider cloudflare-bridge\)/m,
    );
    expect(result.stdout).toMatch(/^ok {4}sandbox +a sandbox started and found oma-ama-worker/m);
    expect(result.code).toBe(0);
    expect(result.stdout + result.stderr).not.toContain(stack.environment.environmentKey);
  });

  it("fails naming the API when it refuses the key", async () => {
    const result = await stack.run(["--check"], { OMA_ENVIRONMENT_KEY: "not-the-environment-key" });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /^FAIL {2}api +.*refused the environment key of env_\S+ \(401\)/m,
    );
    expect(result.stdout + result.stderr).not.toContain("not-the-environment-key");
  });

  it("fails naming the API when it is unreachable", async () => {
    const result = await stack.run(["--check"], { OMA_API_BASE_URL: "http://127.0.0.1:9" });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^FAIL {2}api +http:\/\/127\.0\.0\.1:9 is unreachable/m);
  });

  it("fails naming the store when it cannot be written", async () => {
    const directory = join(stack.dir, "read-only");
    await mkdir(directory);
    const undo = makeReadOnly(directory, "directory");
    try {
      const result = await stack.run(["--check"], {
        OMA_STORE: `sqlite://${directory}/runtime.sqlite`,
      });
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(
        new RegExp(`^FAIL {2}store +sqlite://${directory}/runtime\\.sqlite: `, "m"),
      );
    } finally {
      undo();
    }
  });

  it("fails naming the driver when it does not load", async () => {
    const result = await stack.run(["--check"], {
      OMA_DRIVER: "@open-managed-agents/no-such-driver",
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^FAIL {2}driver +@open-managed-agents\/no-such-driver: /m);
  });

  it("fails naming the sandbox, and says the harness must be on the runtime's PATH, when the probe cannot find it", async () => {
    const result = await stack.run(["--check"], {
      OMA_PROFILE: profileWith("oma-missing-harness"),
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /^FAIL {2}sandbox +readiness_failed: (sandbox-acquire failed: )?readiness probe for oma-missing-harness exited with code \d+ \(oma-missing-harness is not on the runtime's PATH/m,
    );
  });
});

describe("an unreachable API", () => {
  it("is logged through the service's logger, counted, and makes /readyz fail", async () => {
    const service = stack.start({
      OMA_API_BASE_URL: "http://127.0.0.1:9",
      OMA_POLL_INTERVAL_MS: "300",
    });
    try {
      const http = await service.httpUrl();
      // The SDK's poller retries a failed poll on its own; its line comes through the service's logger.
      const failure = await service.waitFor("sdk.log", (line) =>
        String(line.message).startsWith("poll failed"),
      );
      expect(String(failure.message)).toMatch(/Connection error/);
      expect(failure.level).toBe(40);
      const metrics = await (await fetch(`${http}/metrics`)).text();
      expect(sample(metrics, "oma_work_api_failures_total", { operation: "poll" })).toBeGreaterThan(
        0,
      );
      const ready = await fetch(`${http}/readyz`);
      expect(ready.status).toBe(503);
      expect(
        ((await ready.json()) as { checks: { api: { detail: string } } }).checks.api.detail,
      ).toBe("the Work API is unreachable");
      // Nothing bypassed the logger: every line the process wrote is JSON.
      for (const line of service.output().split("\n").filter(Boolean))
        expect(() => JSON.parse(line)).not.toThrow();
    } finally {
      expect(await service.stop()).toBe(0);
    }
  });
});
