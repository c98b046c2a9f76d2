import Anthropic from "@anthropic-ai/sdk";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import {
  createManagedEnvironmentWorker,
  createManagedEnvironmentWorkerInstallation,
} from "../src/index.js";
import { typedError } from "./support/errors.js";

const WEBHOOK_KEY = `whsec_${Buffer.from("a-signing-key-of-thirty-two-byte").toString("base64")}`;
// An unreachable API: these cases never reach the network.
const client = new Anthropic({ baseURL: "http://127.0.0.1:9", apiKey: null, authToken: "unused" });
const host = { run: async () => ({ type: "conflict" as const, expiresAt: null }) };
const options = {
  client,
  environmentId: "env_1",
  environmentKey: "environment-key-value",
  workspaceId: "ws_1",
  host,
  profileFor: () => {
    throw new Error("not reached");
  },
  webhookKey: WEBHOOK_KEY,
};

describe("createManagedEnvironmentWorker options", () => {
  it.each([
    [{ environmentKey: "" }, "environmentKey"],
    [{ concurrency: 0 }, "concurrency"],
    [{ host: {} }, "host"],
    [{ apiBaseUrl: "file:///x" }, "apiBaseUrl"],
    [{ heartbeatIntervalMs: 90_000, heartbeatTtlSeconds: 60 }, "heartbeatIntervalMs"],
    [{ conflictRetry: { attempts: 0 } }, "conflictRetry.attempts"],
    [{ surprise: true }, "(root)"],
  ])("refuses %o with invalid_config naming the field", async (override, path) => {
    const error = await typedError(() =>
      createManagedEnvironmentWorker({ ...options, ...override } as never),
    );
    expect(error.code).toBe("invalid_config");
    expect(error.context.path).toBe(path);
    expect(error.message).not.toContain("environment-key-value");
  });
});

describe("handleWebhook", () => {
  const body = JSON.stringify({
    type: "session.status_idled",
    id: "evt_1",
    data: { id: "sesn_1", type: "session" },
  });
  const signer = new Webhook(WEBHOOK_KEY);

  it("refuses a bad signature with unauthorized", async () => {
    const worker = createManagedEnvironmentWorker(options);
    const headers = {
      "webhook-id": "msg_1",
      "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
      "webhook-signature": "v1,AAAA",
    };
    const error = await typedError(() => worker.handleWebhook({ body, headers }));
    expect(error.code).toBe("unauthorized");
  });

  it("refuses a correctly signed but stale webhook", async () => {
    const worker = createManagedEnvironmentWorker(options);
    const stale = new Date(Date.now() - 60 * 60 * 1000);
    const headers = {
      "webhook-id": "msg_2",
      "webhook-timestamp": String(Math.floor(stale.getTime() / 1000)),
      "webhook-signature": signer.sign("msg_2", stale, body),
    };
    expect((await typedError(() => worker.handleWebhook({ body, headers }))).code).toBe(
      "unauthorized",
    );
  });

  it("refuses a body altered after signing", async () => {
    const worker = createManagedEnvironmentWorker(options);
    const now = new Date();
    const headers = new Headers({
      "webhook-id": "msg_3",
      "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
      "webhook-signature": signer.sign("msg_3", now, body),
    });
    expect(
      (
        await typedError(() =>
          worker.handleWebhook({ body: body.replace("idled", "running"), headers }),
        )
      ).code,
    ).toBe("unauthorized");
  });

  it("needs a signing key", async () => {
    const worker = createManagedEnvironmentWorker({ ...options, webhookKey: undefined });
    expect((await typedError(() => worker.handleWebhook({ body, headers: {} }))).code).toBe(
      "invalid_config",
    );
  });
});

describe("createManagedEnvironmentWorkerInstallation", () => {
  it("external_worker serves nothing and starts nothing", async () => {
    expect(await createManagedEnvironmentWorkerInstallation({ mode: "external_worker" })).toEqual({
      mode: "external_worker",
      worker: null,
    });
  });

  it.each(["provider_dispatch", "provider_activation"] as const)(
    "%s is unsupported_operation with the reason",
    async (mode) => {
      const error = await typedError(() => createManagedEnvironmentWorkerInstallation({ mode }));
      expect(error.code).toBe("unsupported_operation");
      expect(error.message).toContain("Work API");
      expect(error.context.mode).toBe(mode);
    },
  );

  it("runtime_host builds the worker, and needs a host or a provider", async () => {
    const installation = await createManagedEnvironmentWorkerInstallation({
      mode: "runtime_host",
      worker: options,
    });
    expect(installation.mode).toBe("runtime_host");
    expect(typeof installation.worker?.drain).toBe("function");
    const { host: _host, ...withoutHost } = options;
    expect(
      (
        await typedError(() =>
          createManagedEnvironmentWorkerInstallation({ mode: "runtime_host", worker: withoutHost }),
        )
      ).code,
    ).toBe("invalid_config");
  });

  it("runtime_host loads a driver by module specifier through the host's loader", async () => {
    const { host: _host, ...withoutHost } = options;
    const error = await typedError(() =>
      createManagedEnvironmentWorkerInstallation({
        mode: "runtime_host",
        worker: withoutHost,
        provider: {
          provider: "cloudflare-bridge",
          placement: "driver_service",
          moduleSpecifier: "@open-managed-agents/not-installed",
          factoryOptions: {},
          host: {} as never,
        },
      }),
    );
    expect(error.code).toBe("driver_load_failed");
    expect(error.context.moduleSpecifier).toBe("@open-managed-agents/not-installed");
  });

  it("refuses an unknown mode", async () => {
    expect(
      (
        await typedError(() =>
          createManagedEnvironmentWorkerInstallation({ mode: "sidecar" } as never),
        )
      ).code,
    ).toBe("invalid_config");
  });
});
