/**
 * Every setting of the service, once: its config-file key, its environment variable and its flag. Secrets
 * (`secret: true`) are read only from the environment or from a file named by the `…_FILE` variable or flag;
 * a secret in the config file or on the command line is refused, since both end up in listings and backups.
 */
export interface ConfigKey {
  readonly env: string;
  readonly flag: string;
  readonly secret?: boolean;
  readonly kind: "string" | "integer" | "boolean" | "json";
  readonly description: string;
}

export const CONFIG_KEYS = {
  environmentId: {
    env: "OMA_ENVIRONMENT_ID",
    flag: "environment-id",
    kind: "string",
    description: "the self-hosted environment's id",
  },
  environmentKey: {
    env: "OMA_ENVIRONMENT_KEY",
    flag: "environment-key-file",
    secret: true,
    kind: "string",
    description:
      "the environment key (OMA_ENVIRONMENT_KEY, or a file named by OMA_ENVIRONMENT_KEY_FILE / --environment-key-file)",
  },
  apiBaseUrl: {
    env: "OMA_API_BASE_URL",
    flag: "api-base-url",
    kind: "string",
    description: "Managed Agents API origin",
  },
  workspaceId: {
    env: "OMA_WORKSPACE_ID",
    flag: "workspace-id",
    kind: "string",
    description: "tenant workspace written into every scope",
  },
  driver: {
    env: "OMA_DRIVER",
    flag: "driver",
    kind: "string",
    description: "module specifier of the driver package",
  },
  provider: {
    env: "OMA_PROVIDER",
    flag: "provider",
    kind: "string",
    description: "provider name the driver registers",
  },
  placement: {
    env: "OMA_PLACEMENT",
    flag: "placement",
    kind: "string",
    description: "driver placement",
  },
  driverOptions: {
    env: "OMA_DRIVER_OPTIONS",
    flag: "driver-options",
    kind: "json",
    description: "extra non-secret driver factory options (JSON object)",
  },
  store: {
    env: "OMA_STORE",
    flag: "store",
    kind: "string",
    description: "fence, orphan and journal store URL (sqlite:///path, postgres://user@host/db)",
  },
  checkpointStore: {
    env: "OMA_CHECKPOINT_STORE",
    flag: "checkpoint-store",
    kind: "string",
    description: "checkpoint blob store URL (file:///dir, s3://bucket/prefix)",
  },
  outputStore: {
    env: "OMA_OUTPUT_STORE",
    flag: "output-store",
    kind: "string",
    description: "output blob store URL; default: the checkpoint store",
  },
  concurrency: {
    env: "OMA_CONCURRENCY",
    flag: "concurrency",
    kind: "integer",
    description: "items run at once",
  },
  pollIntervalMs: {
    env: "OMA_POLL_INTERVAL_MS",
    flag: "poll-interval-ms",
    kind: "integer",
    description: "period of the fallback non-blocking poll",
  },
  shutdownGraceMs: {
    env: "OMA_SHUTDOWN_GRACE_MS",
    flag: "shutdown-grace-ms",
    kind: "integer",
    description: "how long shutdown lets running items finish",
  },
  leaseWhilePreparing: {
    env: "OMA_LEASE_WHILE_PREPARING",
    flag: "lease-while-preparing",
    kind: "boolean",
    description:
      "heartbeat an ama_worker item while its sandbox is prepared and hand the lease to oma-ama-worker",
  },
  leaseTtlMs: {
    env: "OMA_LEASE_TTL_MS",
    flag: "lease-ttl-ms",
    kind: "integer",
    description: "fence lease TTL",
  },
  fenceHeartbeatMs: {
    env: "OMA_FENCE_HEARTBEAT_MS",
    flag: "fence-heartbeat-ms",
    kind: "integer",
    description: "fence renew period",
  },
  reconcileIntervalMs: {
    env: "OMA_RECONCILE_INTERVAL_MS",
    flag: "reconcile-interval-ms",
    kind: "integer",
    description: "orphan and journal reconciler period",
  },
  sweepIntervalMs: {
    env: "OMA_SWEEP_INTERVAL_MS",
    flag: "sweep-interval-ms",
    kind: "integer",
    description: "checkpoint sweep period; 0 turns it off",
  },
  sweepGraceMs: {
    env: "OMA_SWEEP_GRACE_MS",
    flag: "sweep-grace-ms",
    kind: "integer",
    description: "unreferenced checkpoint objects younger than this are kept",
  },
  profile: {
    env: "OMA_PROFILE",
    flag: "profile",
    kind: "json",
    description: "default runtime profile (JSON)",
  },
  harnessCommand: {
    env: "OMA_HARNESS_COMMAND",
    flag: "harness-command",
    kind: "string",
    description: "harness command of the default profile",
  },
  ownerId: {
    env: "OMA_OWNER_ID",
    flag: "owner-id",
    kind: "string",
    description: "fence owner id of this process",
  },
  workerId: {
    env: "OMA_WORKER_ID",
    flag: "worker-id",
    kind: "string",
    description: "sent as Anthropic-Worker-ID",
  },
  httpPort: {
    env: "OMA_HTTP_PORT",
    flag: "http-port",
    kind: "integer",
    description: "port of /healthz, /readyz, /metrics (and the webhook); absent: no listener",
  },
  httpHost: {
    env: "OMA_HTTP_HOST",
    flag: "http-host",
    kind: "string",
    description: "address the HTTP listener binds",
  },
  webhookKey: {
    env: "OMA_WEBHOOK_KEY",
    flag: "webhook-key-file",
    secret: true,
    kind: "string",
    description: "Standard Webhooks signing key; enables POST /webhook on the HTTP port",
  },
  logLevel: {
    env: "OMA_LOG_LEVEL",
    flag: "log-level",
    kind: "string",
    description: "debug, info, warn or error",
  },
  logFormat: {
    env: "OMA_LOG_FORMAT",
    flag: "log-format",
    kind: "string",
    description: "json, pretty or auto (pretty on a TTY)",
  },
} as const satisfies Record<string, ConfigKey>;

export type ConfigKeyName = keyof typeof CONFIG_KEYS;
