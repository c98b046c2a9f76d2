import { InvalidConfigError } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import type { WorkerEnv } from "../env.js";

/** Settings of the self-hosted environment the Worker serves, read from its environment. */
export interface EnvironmentSettings {
  /** The environment key (a Workers secret): polls and acks work, and is an item's credential when its secret has none. */
  readonly environmentKey: string;
  /** Standard Webhooks signing secret (`whsec_…`, a Workers secret). */
  readonly webhookSecret: string;
  /** Managed Agents API origin the SDK client talks to. */
  readonly baseUrl: string;
  /** Name in `PROFILES` of the profile every claimed session item runs. */
  readonly profileName: string;
  /** Items one trigger claims at most: bounds the Durable Objects and containers one pass starts. */
  readonly maxClaimsPerPass: number;
}

const DEFAULT_BASE_URL = "https://api.anthropic.com";

const schema = z
  .object({
    ENVIRONMENT_KEY: z.string().min(1, "is not set (wrangler secret put ENVIRONMENT_KEY)"),
    WEBHOOK_SECRET: z.string().regex(/^whsec_[A-Za-z0-9+/=]+$/, "is not set or is not a whsec_ secret (wrangler secret put WEBHOOK_SECRET)"),
    MANAGED_AGENTS_BASE_URL: z.url({ protocol: /^https?$/ }).default(DEFAULT_BASE_URL),
    ENVIRONMENT_PROFILE: z.string().min(1).default("ama-worker"),
    ENVIRONMENT_MAX_CLAIMS: z
      .string()
      .regex(/^\d+$/, "must be a whole number")
      .transform(Number)
      .pipe(z.number().int().min(1).max(500))
      .default(10),
  })
  .strip();

const cache = new WeakMap<object, EnvironmentSettings>();

/**
 * Reads the environment settings once per environment object. An empty variable counts as unset. A
 * missing or bad value → `invalid_config` naming the variable, never its value.
 */
export function readEnvironmentSettings(env: WorkerEnv): EnvironmentSettings {
  const cached = cache.get(env);
  if (cached) return cached;
  const raw: Record<string, unknown> = {};
  for (const name of Object.keys(schema.shape)) {
    const value = (env as unknown as Record<string, unknown>)[name];
    raw[name] = value === "" ? undefined : value;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue?.path[0] ?? "environment settings");
    const message = issue?.code === "invalid_type" ? "is not set" : (issue?.message ?? "is invalid");
    throw new InvalidConfigError({ message: `${field} ${message}`, context: { field } });
  }
  const settings: EnvironmentSettings = {
    environmentKey: parsed.data.ENVIRONMENT_KEY,
    webhookSecret: parsed.data.WEBHOOK_SECRET,
    baseUrl: parsed.data.MANAGED_AGENTS_BASE_URL,
    profileName: parsed.data.ENVIRONMENT_PROFILE,
    maxClaimsPerPass: parsed.data.ENVIRONMENT_MAX_CLAIMS,
  };
  cache.set(env, settings);
  return settings;
}
