/**
 * Environment keys that carry a model provider's secret or redirect model traffic. None of them may
 * reach the sandbox when hosted inference is on: model calls go through the inference proxy instead.
 */
export const MODEL_PROVIDER_SECRET_ENV_KEYS = [
  "OPENAI_API_KEY",
  "OPENAI_BASE_URL",
  "OPENAI_ORG_ID",
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "ANTHROPIC_BASE_URL",
  "GEMINI_API_KEY",
  "GOOGLE_API_KEY",
  "GOOGLE_GENERATIVE_AI_API_KEY",
  "AZURE_OPENAI_API_KEY",
  "AZURE_OPENAI_ENDPOINT",
  "MISTRAL_API_KEY",
  "GROQ_API_KEY",
  "XAI_API_KEY",
  "DEEPSEEK_API_KEY",
  "OPENROUTER_API_KEY",
  "TOGETHER_API_KEY",
  "COHERE_API_KEY",
  "FIREWORKS_API_KEY",
  "PERPLEXITY_API_KEY",
  "MOONSHOT_API_KEY",
  "HF_TOKEN",
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
] as const;

/** Environment variable naming the inference proxy URL of the session. */
export const HOSTED_INFERENCE_URL_ENV = "HOSTED_INFERENCE_URL";
/** Environment variable holding the session's short-lived proxy bearer. */
export const HOSTED_INFERENCE_TOKEN_ENV = "HOSTED_INFERENCE_TOKEN";

/** Inputs of {@link projectHostedInferenceEnv}. */
export interface HostedInferenceProjection {
  /** OpenMA origin serving `/v1/oma/inference-proxy/:sessionId/*`. */
  readonly gatewayBaseUrl: string;
  readonly sessionId: string;
  /** The session's proxy bearer (sessions token). Never logged, never part of the URL. */
  readonly token: string;
}

/** The inference proxy URL of one session: `{gateway}/v1/oma/inference-proxy/{sessionId}`. */
export function hostedInferenceUrl(gatewayBaseUrl: string, sessionId: string): string {
  return `${gatewayBaseUrl.replace(/\/+$/, "")}/v1/oma/inference-proxy/${encodeURIComponent(sessionId)}`;
}

/**
 * Returns a new environment for the sandbox with every {@link MODEL_PROVIDER_SECRET_ENV_KEYS} entry
 * removed and `HOSTED_INFERENCE_URL` / `HOSTED_INFERENCE_TOKEN` set. The input is not modified.
 */
export function projectHostedInferenceEnv<V extends string | undefined>(
  env: Readonly<Record<string, V>>,
  projection: HostedInferenceProjection,
): Record<string, V | string> {
  const removed = new Set<string>(MODEL_PROVIDER_SECRET_ENV_KEYS);
  const result: Record<string, V | string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (!removed.has(key)) result[key] = value;
  }
  result[HOSTED_INFERENCE_URL_ENV] = hostedInferenceUrl(
    projection.gatewayBaseUrl,
    projection.sessionId,
  );
  result[HOSTED_INFERENCE_TOKEN_ENV] = projection.token;
  return result;
}
