import { InvalidConfigError, managedRuntimeProfileSchema } from "@open-managed-agents/runtime-resource-contract";
import type { ManagedRuntimeProfile } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
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
  CONTAINER_INSTANCE_TYPE: z.string().regex(/^[a-z0-9-]{1,32}$/, "must be an instance type name").default("standard-1"),
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
      throw new InvalidConfigError({ message: `${name} is not valid JSON`, context: { field: name } });
    }
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const path = issue && issue.path.length > 0 ? `.${issue.path.join(".")}` : "";
      throw new InvalidConfigError({ message: `${name}${path} ${issue?.message ?? "is invalid"}`, context: { field: name } });
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
  };
  configCache.set(env, config);
  return config;
}
