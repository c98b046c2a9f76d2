import {
  InvalidConfigError,
  managedRuntimeProfileSchema,
} from "@open-managed-agents/runtime-resource-contract";
import type { ManagedRuntimeProfile } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import type { WorkerBindings } from "./bindings.js";
import type { WorkerEnv } from "./env.js";

/** Ids of workspaces, environments, sessions and work items: safe in URLs, keys and Durable Object names. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The Worker's settings, read from its environment. */
export interface WorkerConfig {
  readonly workspaceId: string;
  readonly environmentId: string;
  readonly leaseTtlMs: number;
  /** Renewal and heartbeat period of the host: a third of the lease. */
  readonly heartbeatIntervalMs: number;
  readonly orphanReapLimit: number;
  readonly localBackups: boolean;
  readonly controlPlaneBaseUrl: string | undefined;
  readonly profiles: Readonly<Record<string, ManagedRuntimeProfile>>;
  /** Least severe host event written to the log. */
  readonly logLevel: LogLevel;
  /** The container class's `instance_type` (wrangler.jsonc), priced by the cost report. */
  readonly instanceType: string;
  /**
   * The first setting presigned backups need that is unset (its name only), or null when all are set.
   * The Sandbox Durable Object reads the values itself.
   */
  readonly missingBackupSetting: string | null;
}

/** Severity threshold of the Worker's log lines; `silent` writes none. */
export type LogLevel = "info" | "warn" | "error" | "silent";

const id = z.string().regex(ID_PATTERN, "must be 1-128 letters, digits, '.', '_' or '-'");
const integerText = (min: number, max: number) => {
  const range = `must be a whole number from ${min} to ${max}`;
  return z
    .string()
    .regex(/^[+-]?\d+$/, range)
    .transform(Number)
    .pipe(z.number().int().min(min, range).max(max, range));
};

const profilesSchema = z.preprocess(
  (value) => (typeof value === "string" ? JSON.parse(value) : value),
  z.record(id, managedRuntimeProfileSchema),
);

const fields = {
  WORKSPACE_ID: id.default("default"),
  ENVIRONMENT_ID: id.default("default"),
  LEASE_TTL_MS: integerText(3_000, 3_600_000).default(90_000),
  ORPHAN_REAP_LIMIT: integerText(1, 1000).default(50),
  SANDBOX_LOCAL_BACKUPS: z.enum(["true", "false"]).default("false"),
  CONTROL_PLANE_BASE_URL: z.string().url().optional(),
  PROFILES: profilesSchema.default({}),
  LOG_LEVEL: z.enum(["info", "warn", "error", "silent"]).default("info"),
  CONTAINER_INSTANCE_TYPE: z
    .string()
    .regex(/^[a-z0-9-]{1,32}$/, "must be an instance type name")
    .default("standard-1"),
} as const;

const configCache = new WeakMap<object, WorkerConfig>();

/**
 * Reads the settings once per environment object. An empty variable counts as unset. A bad value →
 * `invalid_config` naming the variable (never its value).
 */
export function readConfig(env: WorkerEnv): WorkerConfig {
  const cached = configCache.get(env);
  if (cached) return cached;
  const values: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(fields)) {
    const raw = (env as unknown as Record<string, unknown>)[name];
    let parsed: ReturnType<typeof schema.safeParse>;
    try {
      parsed = schema.safeParse(raw === "" ? undefined : raw);
    } catch {
      throw new InvalidConfigError({
        message: `${name} is not valid JSON`,
        context: { field: name },
      });
    }
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const path = issue && issue.path.length > 0 ? `.${issue.path.join(".")}` : "";
      throw new InvalidConfigError({
        message: `${name}${path} ${issue?.message ?? "is invalid"}`,
        context: { field: name },
      });
    }
    values[name] = parsed.data;
  }
  const leaseTtlMs = values.LEASE_TTL_MS as number;
  const config: WorkerConfig = {
    workspaceId: values.WORKSPACE_ID as string,
    environmentId: values.ENVIRONMENT_ID as string,
    leaseTtlMs,
    heartbeatIntervalMs: Math.floor(leaseTtlMs / 3),
    orphanReapLimit: values.ORPHAN_REAP_LIMIT as number,
    localBackups: values.SANDBOX_LOCAL_BACKUPS === "true",
    controlPlaneBaseUrl: values.CONTROL_PLANE_BASE_URL as string | undefined,
    profiles: values.PROFILES as Record<string, ManagedRuntimeProfile>,
    logLevel: values.LOG_LEVEL as LogLevel,
    instanceType: values.CONTAINER_INSTANCE_TYPE as string,
    missingBackupSetting: missingBackupSetting(env),
  };
  configCache.set(env, config);
  return config;
}

const present = (value: string | undefined): boolean => typeof value === "string" && value !== "";

function missingBackupSetting(env: WorkerEnv): string | null {
  const missing = [
    [
      "CLOUDFLARE_ACCOUNT_ID",
      present(env.CLOUDFLARE_ACCOUNT_ID) || present(env.CLOUDFLARE_R2_ACCOUNT_ID),
    ],
    ["BACKUP_BUCKET_NAME", present(env.BACKUP_BUCKET_NAME)],
    ["R2_ACCESS_KEY_ID", present(env.R2_ACCESS_KEY_ID)],
    ["R2_SECRET_ACCESS_KEY", present(env.R2_SECRET_ACCESS_KEY)],
  ].find(([, ok]) => !ok)?.[0];
  return typeof missing === "string" ? missing : null;
}

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

const environmentSchema = z
  .object({
    ENVIRONMENT_KEY: z.string().min(1, "is not set (wrangler secret put ENVIRONMENT_KEY)"),
    WEBHOOK_SECRET: z
      .string()
      .regex(
        /^whsec_[A-Za-z0-9+/=]+$/,
        "is not set or is not a whsec_ secret (wrangler secret put WEBHOOK_SECRET)",
      ),
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

const settingsCache = new WeakMap<object, EnvironmentSettings>();

/**
 * Reads the environment settings once per environment object. An empty variable counts as unset. A
 * missing or bad value → `invalid_config` naming the variable, never its value.
 */
export function readEnvironmentSettings(env: WorkerEnv): EnvironmentSettings {
  const cached = settingsCache.get(env);
  if (cached) return cached;
  const raw: Record<string, unknown> = {};
  for (const name of Object.keys(environmentSchema.shape)) {
    const value = (env as unknown as Record<string, unknown>)[name];
    raw[name] = value === "" ? undefined : value;
  }
  const parsed = environmentSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue?.path[0] ?? "environment settings");
    const message =
      issue?.code === "invalid_type" ? "is not set" : (issue?.message ?? "is invalid");
    throw new InvalidConfigError({ message: `${field} ${message}`, context: { field } });
  }
  const settings: EnvironmentSettings = {
    environmentKey: parsed.data.ENVIRONMENT_KEY,
    webhookSecret: parsed.data.WEBHOOK_SECRET,
    baseUrl: parsed.data.MANAGED_AGENTS_BASE_URL,
    profileName: parsed.data.ENVIRONMENT_PROFILE,
    maxClaimsPerPass: parsed.data.ENVIRONMENT_MAX_CLAIMS,
  };
  settingsCache.set(env, settings);
  return settings;
}

/**
 * What the Worker's code gets instead of its environment: the bindings, and the settings parsed from
 * the variables. The settings are parsed on first use, so a bad one refuses only what needs it (the
 * health check still answers, a Worker without `ENVIRONMENT_KEY` still serves the bearer API).
 */
export interface WorkerContext {
  readonly bindings: WorkerBindings;
  /** The API's bearer token (a secret): the router checks requests against it. */
  readonly apiToken: string | undefined;
  /** A certification build (`CERTIFICATION=true`): serves the conformance route. */
  readonly certification: boolean;
  /** `ENVIRONMENT_KEY` is set: the cron trigger polls the environment's queue too. */
  readonly claimsWork: boolean;
  /** The Worker's settings; a bad variable throws `invalid_config` naming it. */
  config(): WorkerConfig;
  /** The self-hosted environment's settings; a missing or bad one throws `invalid_config` naming it. */
  environment(): EnvironmentSettings;
}

const contextCache = new WeakMap<object, WorkerContext>();

/** The context of one environment object (the entry's and each Durable Object's `env`), made once. */
export function workerContext(env: WorkerEnv): WorkerContext {
  const cached = contextCache.get(env);
  if (cached) return cached;
  const context: WorkerContext = {
    bindings: {
      Sandbox: env.Sandbox,
      WORK_RUNNER: env.WORK_RUNNER,
      ENVIRONMENT_RUNNER: env.ENVIRONMENT_RUNNER,
      CLAIM_COORDINATOR: env.CLAIM_COORDINATOR,
      DB: env.DB,
      OUTPUTS_BUCKET: env.OUTPUTS_BUCKET,
      BACKUP_BUCKET: env.BACKUP_BUCKET,
    },
    apiToken: env.API_TOKEN,
    certification: env.CERTIFICATION === "true",
    claimsWork: present(env.ENVIRONMENT_KEY),
    config: () => readConfig(env),
    environment: () => readEnvironmentSettings(env),
  };
  contextCache.set(env, context);
  return context;
}
