import type {
  ManagedRuntimeProfile,
  RuntimeProcessDeclaration,
} from "@open-managed-agents/runtime-resource-contract";
import { projectHostedInferenceEnv } from "@open-managed-agents/sandbox";
import type { DecodedWorkSecret } from "./work-secret.js";

/** Where the sandbox's model traffic goes when hosted inference is on. */
export interface HostedInferenceOptions {
  /** OpenMA origin serving `/v1/oma/inference-proxy/:sessionId/*`. */
  readonly gatewayBaseUrl: string;
}

/** What {@link projectWorkEnv} needs to know about one claimed item. */
export interface WorkEnvInput {
  readonly workId: string;
  readonly environmentId: string;
  readonly sessionId: string;
  /** The item's raw `secret`, handed on unchanged; null when the item carried none. */
  readonly secret: string | null;
  readonly decoded: DecodedWorkSecret;
  /** Managed Agents API origin the in-sandbox worker talks to. */
  readonly apiBaseUrl: string;
  /** Given to the sandbox only when the secret carries no sessions token. */
  readonly environmentKey: string;
  readonly hostedInference: HostedInferenceOptions | null;
}

/**
 * The `ANTHROPIC_*` variables an AMA worker's `handleItem()` reads, on top of the profile's own env.
 * The hosted-inference projection runs first, so it strips model-provider secrets the profile carried;
 * `ANTHROPIC_BASE_URL` is then set to the Managed Agents API (not a model endpoint) the worker calls.
 */
export function projectWorkEnv(
  base: Readonly<Record<string, string>> | undefined,
  input: WorkEnvInput,
): Record<string, string> {
  const projected: Record<string, string> = input.hostedInference
    ? (projectHostedInferenceEnv(base ?? {}, {
        gatewayBaseUrl: input.hostedInference.gatewayBaseUrl,
        sessionId: input.sessionId,
        // The proxy bearer is the item's own credential: the sessions token, else the environment key.
        token: input.decoded.sessionsToken ?? input.environmentKey,
      }) as Record<string, string>)
    : { ...base };
  projected.ANTHROPIC_WORK_ID = input.workId;
  projected.ANTHROPIC_ENVIRONMENT_ID = input.environmentId;
  projected.ANTHROPIC_SESSION_ID = input.sessionId;
  projected.ANTHROPIC_BASE_URL = input.apiBaseUrl;
  if (input.secret !== null) projected.ANTHROPIC_WORK_SECRET = input.secret;
  else delete projected.ANTHROPIC_WORK_SECRET;
  if (input.decoded.sessionsToken === null)
    projected.ANTHROPIC_ENVIRONMENT_KEY = input.environmentKey;
  else delete projected.ANTHROPIC_ENVIRONMENT_KEY;
  return projected;
}

/** Returns `profile` with the harness process (AMA worker or supervisor) running under `env`. */
export function withHarnessEnv(
  profile: ManagedRuntimeProfile,
  env: (base: RuntimeProcessDeclaration["env"]) => Record<string, string>,
): ManagedRuntimeProfile {
  const driver = profile.driver;
  if (driver.type === "ama_worker") {
    return {
      ...profile,
      driver: { ...driver, process: { ...driver.process, env: env(driver.process.env) } },
    };
  }
  return {
    ...profile,
    driver: { ...driver, supervisor: { ...driver.supervisor, env: env(driver.supervisor.env) } },
  };
}
