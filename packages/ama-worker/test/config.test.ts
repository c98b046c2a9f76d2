import { describe, expect, it } from "vitest";
import { AmaWorkerConfigError, readAmaWorkerConfig } from "../src/config.js";

const secretOf = (payload: unknown) => Buffer.from(JSON.stringify(payload)).toString("base64url");
const ids = {
  ANTHROPIC_WORK_ID: "work_1",
  ANTHROPIC_ENVIRONMENT_ID: "env_1",
  ANTHROPIC_SESSION_ID: "sesn_1",
};

describe("readAmaWorkerConfig", () => {
  it("uses the secret's sessions token and api_base_url", () => {
    const config = readAmaWorkerConfig({
      ...ids,
      ANTHROPIC_WORK_SECRET: secretOf({
        sessions_token: "st-1",
        api_base_url: "http://127.0.0.1:9/",
      }),
    });
    expect(config).toEqual({
      baseURL: "http://127.0.0.1:9/",
      authToken: "st-1",
      workdir: "/workspace",
      maxIdleMs: undefined,
    });
  });

  it("prefers ANTHROPIC_BASE_URL and falls back to the environment key without a sessions token", () => {
    const config = readAmaWorkerConfig({
      ...ids,
      ANTHROPIC_BASE_URL: "http://control.test",
      ANTHROPIC_WORK_SECRET: secretOf({ api_base_url: "http://other.test" }),
      ANTHROPIC_ENVIRONMENT_KEY: "ek-1",
      OMA_AMA_MAX_IDLE_MS: "1500",
      OMA_AMA_WORKDIR: "/srv/work",
    });
    expect(config).toEqual({
      baseURL: "http://control.test",
      authToken: "ek-1",
      workdir: "/srv/work",
      maxIdleMs: 1500,
    });
  });

  it.each([
    [{ ANTHROPIC_ENVIRONMENT_ID: "e", ANTHROPIC_SESSION_ID: "s" }, "ANTHROPIC_WORK_ID"],
    [{ ...ids, ANTHROPIC_BASE_URL: "http://x.test" }, "ANTHROPIC_WORK_SECRET"],
    [{ ...ids, ANTHROPIC_ENVIRONMENT_KEY: "k" }, "ANTHROPIC_BASE_URL"],
    [
      { ...ids, ANTHROPIC_BASE_URL: "not a url", ANTHROPIC_ENVIRONMENT_KEY: "k" },
      "ANTHROPIC_BASE_URL",
    ],
    [
      { ...ids, ANTHROPIC_BASE_URL: "http://x.test", ANTHROPIC_WORK_SECRET: "%%%secret-value%%%" },
      "ANTHROPIC_WORK_SECRET",
    ],
    [
      {
        ...ids,
        ANTHROPIC_BASE_URL: "http://x.test",
        ANTHROPIC_ENVIRONMENT_KEY: "k",
        OMA_AMA_MAX_IDLE_MS: "-1",
      },
      "OMA_AMA_MAX_IDLE_MS",
    ],
  ])("names the variable that is missing or malformed (%#)", (env, variable) => {
    let caught: unknown;
    try {
      readAmaWorkerConfig(env);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AmaWorkerConfigError);
    expect((caught as AmaWorkerConfigError).variable).toBe(variable);
    expect((caught as Error).message).not.toContain("secret-value");
  });
});
