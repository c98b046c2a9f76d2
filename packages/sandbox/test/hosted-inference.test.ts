import { describe, expect, it } from "vitest";
import {
  HOSTED_INFERENCE_TOKEN_ENV,
  HOSTED_INFERENCE_URL_ENV,
  MODEL_PROVIDER_SECRET_ENV_KEYS,
  hostedInferenceUrl,
  projectHostedInferenceEnv,
} from "../src/index.js";

const projection = {
  gatewayBaseUrl: "https://oma.example.com/",
  sessionId: "sess/1 2",
  token: "sessions-token-value",
};

describe("projectHostedInferenceEnv", () => {
  it("removes every provider key and keeps unrelated variables", () => {
    const env: Record<string, string> = { PATH: "/usr/bin", HOME: "/workspace" };
    for (const key of MODEL_PROVIDER_SECRET_ENV_KEYS) env[key] = `secret-of-${key}`;
    const projected = projectHostedInferenceEnv(env, projection);
    for (const key of MODEL_PROVIDER_SECRET_ENV_KEYS) expect(projected).not.toHaveProperty(key);
    expect(projected.PATH).toBe("/usr/bin");
    expect(projected.HOME).toBe("/workspace");
    expect(JSON.stringify(projected)).not.toContain("secret-of-");
  });

  it("lists the keys the inference proxy contract names", () => {
    for (const key of [
      "OPENAI_BASE_URL",
      "OPENAI_API_KEY",
      "ANTHROPIC_API_KEY",
      "ANTHROPIC_AUTH_TOKEN",
      "ANTHROPIC_BASE_URL",
      "DEEPSEEK_API_KEY",
      "GEMINI_API_KEY",
      "GOOGLE_API_KEY",
      "GOOGLE_GENERATIVE_AI_API_KEY",
      "AZURE_OPENAI_API_KEY",
      "XAI_API_KEY",
      "MISTRAL_API_KEY",
      "GROQ_API_KEY",
      "OPENROUTER_API_KEY",
      "TOGETHER_API_KEY",
      "COHERE_API_KEY",
      "AWS_ACCESS_KEY_ID",
      "AWS_SECRET_ACCESS_KEY",
      "AWS_SESSION_TOKEN",
    ]) {
      expect(MODEL_PROVIDER_SECRET_ENV_KEYS).toContain(key);
    }
  });

  it("sets the proxy URL without a doubled slash and with an encoded session id", () => {
    const projected = projectHostedInferenceEnv({}, projection);
    expect(projected[HOSTED_INFERENCE_URL_ENV]).toBe(
      "https://oma.example.com/v1/oma/inference-proxy/sess%2F1%202",
    );
    expect(projected[HOSTED_INFERENCE_TOKEN_ENV]).toBe("sessions-token-value");
    expect(projected[HOSTED_INFERENCE_URL_ENV]).not.toContain(projection.token);
  });

  it("overrides hosted variables already present and leaves the input untouched", () => {
    const env = { HOSTED_INFERENCE_URL: "https://attacker.example", OPENAI_API_KEY: "sk-live" };
    const projected = projectHostedInferenceEnv(env, projection);
    expect(projected.HOSTED_INFERENCE_URL).toBe(
      hostedInferenceUrl(projection.gatewayBaseUrl, projection.sessionId),
    );
    expect(env).toEqual({
      HOSTED_INFERENCE_URL: "https://attacker.example",
      OPENAI_API_KEY: "sk-live",
    });
  });
});
