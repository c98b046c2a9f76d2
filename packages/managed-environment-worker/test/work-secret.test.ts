import { describe, expect, it } from "vitest";
import { projectWorkEnv, withHarnessEnv } from "../src/harness-env.js";
import { decodeWorkSecret } from "../src/work-secret.js";
import { typedError } from "./support/errors.js";

const encode = (payload: unknown) => Buffer.from(JSON.stringify(payload)).toString("base64url");
const SECRET_TOKEN = "sessions-token-value-1";

describe("decodeWorkSecret", () => {
  it("reads sessions_token and api_base_url from URL-safe base64 JSON", () => {
    expect(
      decodeWorkSecret(
        encode({ sessions_token: SECRET_TOKEN, api_base_url: "http://127.0.0.1:8787", extra: 1 }),
      ),
    ).toEqual({
      sessionsToken: SECRET_TOKEN,
      apiBaseUrl: "http://127.0.0.1:8787",
    });
  });

  it("treats a missing secret or token as no sessions token", () => {
    expect(decodeWorkSecret(null)).toEqual({ sessionsToken: null, apiBaseUrl: null });
    expect(decodeWorkSecret(encode({ sessions_token: "" }))).toEqual({
      sessionsToken: null,
      apiBaseUrl: null,
    });
  });

  it.each([
    ["not base64 JSON", Buffer.from(`garbage ${SECRET_TOKEN}`).toString("base64url"), "secret"],
    ["an array", encode([SECRET_TOKEN]), "secret"],
    ["a non-string token", encode({ sessions_token: 42 }), "secret.sessions_token"],
    [
      "a bad api_base_url",
      encode({ sessions_token: SECRET_TOKEN, api_base_url: "ftp://x" }),
      "secret.api_base_url",
    ],
  ])(
    "refuses %s with invalid_request naming the field, never the value",
    async (_name, secret, field) => {
      const error = await typedError(() => decodeWorkSecret(secret));
      expect(error.code).toBe("invalid_request");
      expect(error.context.field).toBe(field);
      expect(JSON.stringify(error.toJSON())).not.toContain(SECRET_TOKEN);
      expect(JSON.stringify(error.toJSON())).not.toContain(secret);
    },
  );
});

describe("projectWorkEnv", () => {
  const base = {
    workId: "work_1",
    environmentId: "env_1",
    sessionId: "sesn_1",
    apiBaseUrl: "http://control.test",
    environmentKey: "environment-key-1",
    hostedInference: null,
  };

  it("hands the secret on and keeps the environment key out when the secret carries a sessions token", () => {
    const secret = encode({ sessions_token: SECRET_TOKEN });
    const env = projectWorkEnv(
      { HOME: "/root", ANTHROPIC_ENVIRONMENT_KEY: "stale" },
      { ...base, secret, decoded: decodeWorkSecret(secret) },
    );
    expect(env).toEqual({
      HOME: "/root",
      ANTHROPIC_WORK_ID: "work_1",
      ANTHROPIC_ENVIRONMENT_ID: "env_1",
      ANTHROPIC_SESSION_ID: "sesn_1",
      ANTHROPIC_BASE_URL: "http://control.test",
      ANTHROPIC_WORK_SECRET: secret,
    });
  });

  it("gives the environment key only when the secret has no sessions token", () => {
    const env = projectWorkEnv(undefined, {
      ...base,
      secret: null,
      decoded: decodeWorkSecret(null),
    });
    expect(env.ANTHROPIC_ENVIRONMENT_KEY).toBe("environment-key-1");
    expect(env).not.toHaveProperty("ANTHROPIC_WORK_SECRET");
  });

  it("applies the hosted-inference projection: model secrets stripped, the proxy bearer is the sessions token", () => {
    const secret = encode({ sessions_token: SECRET_TOKEN });
    const env = projectWorkEnv(
      { OPENAI_API_KEY: "sk-x", ANTHROPIC_API_KEY: "sk-ant-x", KEEP: "1" },
      {
        ...base,
        secret,
        decoded: decodeWorkSecret(secret),
        hostedInference: { gatewayBaseUrl: "https://gw.test/" },
      },
    );
    expect(env).not.toHaveProperty("OPENAI_API_KEY");
    expect(env).not.toHaveProperty("ANTHROPIC_API_KEY");
    expect(env.KEEP).toBe("1");
    expect(env.HOSTED_INFERENCE_URL).toBe("https://gw.test/v1/oma/inference-proxy/sesn_1");
    expect(env.HOSTED_INFERENCE_TOKEN).toBe(SECRET_TOKEN);
  });

  it("puts the env on the harness process of either lane", () => {
    const profile = {
      workspace: { requirement: "durable" as const },
      outputs: { requirement: "disabled" as const },
      runtimeCheckpoint: "disabled" as const,
    };
    const ama = withHarnessEnv(
      {
        ...profile,
        driver: { type: "ama_worker", process: { command: "oma-ama-worker", env: { A: "1" } } },
      },
      (own) => ({ ...own, B: "2" }),
    );
    expect(ama.driver.type === "ama_worker" && ama.driver.process.env).toEqual({ A: "1", B: "2" });
    const supervised = withHarnessEnv(
      {
        ...profile,
        driver: {
          type: "openma_supervised",
          protocol: "openma-harness-supervisor-v1",
          supervisor: { command: "supervisor" },
          harness: { id: "h", version: "1" },
          readyTimeoutMs: 1,
          heartbeatTimeoutMs: 1,
          drainTimeoutMs: 1,
        },
      },
      () => ({ B: "2" }),
    );
    expect(
      supervised.driver.type === "openma_supervised" && supervised.driver.supervisor.env,
    ).toEqual({ B: "2" });
  });
});
