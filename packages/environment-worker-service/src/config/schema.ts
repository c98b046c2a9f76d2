import { hostname } from "node:os";
import {
  type ManagedRuntimeProfile,
  managedRuntimeProfileSchema,
} from "@open-managed-agents/runtime-resource-contract";
import {
  nonNegativeSafeIntegerSchema,
  positiveSafeIntegerSchema,
} from "@open-managed-agents/runtime-utils";
import * as z from "zod";

/** The bridge driver: the default a Node deployment runs. */
export const DEFAULT_DRIVER = "@open-managed-agents/managed-runtime-cloudflare-bridge";
export const DEFAULT_PROVIDER = "cloudflare-bridge";

const httpUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });
const storeUrl = z
  .string()
  .regex(/^[a-z][a-z0-9+.-]*:/, "must be a URL such as sqlite:///var/lib/oma/runtime.sqlite");
const blobUrl = z
  .string()
  .regex(
    /^[a-z][a-z0-9+.-]*:/,
    "must be a URL such as file:///var/lib/oma/blobs or s3://bucket/prefix",
  );

/** The service's settings after every source is merged; validated once. */
export const serviceConfigShape = z
  .object({
    environmentId: z.string({ error: "is required" }).min(1, "is required"),
    environmentKey: z.string({ error: "is required" }).min(1, "is required"),
    apiBaseUrl: httpUrl.default("https://api.anthropic.com"),
    workspaceId: z.string().min(1).default("default"),
    driver: z.string().min(1).default(DEFAULT_DRIVER),
    provider: z.string().min(1).default(DEFAULT_PROVIDER),
    placement: z
      .enum(["in_process", "driver_service"], { error: "must be in_process or driver_service" })
      .default("driver_service"),
    driverOptions: z
      .record(z.string(), z.unknown(), { error: "must be a JSON object" })
      .default({}),
    store: storeUrl,
    checkpointStore: blobUrl.optional(),
    outputStore: blobUrl.optional(),
    concurrency: positiveSafeIntegerSchema.default(1),
    pollIntervalMs: positiveSafeIntegerSchema.default(30_000),
    shutdownGraceMs: nonNegativeSafeIntegerSchema.default(30_000),
    leaseWhilePreparing: z.boolean().default(true),
    leaseTtlMs: positiveSafeIntegerSchema.default(120_000),
    fenceHeartbeatMs: positiveSafeIntegerSchema.default(30_000),
    reconcileIntervalMs: positiveSafeIntegerSchema.default(60_000),
    sweepIntervalMs: nonNegativeSafeIntegerSchema.default(3_600_000),
    sweepGraceMs: nonNegativeSafeIntegerSchema.default(24 * 60 * 60 * 1000),
    profile: z
      .custom<ManagedRuntimeProfile>(
        (value) => managedRuntimeProfileSchema.safeParse(value).success,
        "is not a valid runtime profile",
      )
      .optional(),
    harnessCommand: z.string().min(1).default("oma-ama-worker"),
    ownerId: z.string().min(1).default(`${hostname()}-${process.pid}`),
    workerId: z.string().min(1).optional(),
    httpPort: z.number().int().min(0).max(65_535, "must be a port number").optional(),
    httpHost: z.string().min(1).default("127.0.0.1"),
    webhookKey: z.string().min(1).optional(),
    logLevel: z
      .enum(["debug", "info", "warn", "error"], { error: "must be debug, info, warn or error" })
      .default("info"),
    logFormat: z
      .enum(["json", "pretty", "auto"], { error: "must be json, pretty or auto" })
      .default("auto"),
  })
  .strict();

export const serviceConfigSchema = serviceConfigShape.refine(
  (config) => config.fenceHeartbeatMs < config.leaseTtlMs,
  { message: "must be shorter than leaseTtlMs", path: ["fenceHeartbeatMs"] },
);

export type ServiceConfig = z.output<typeof serviceConfigSchema>;

/** The default profile: the unmodified AMA worker on the sandbox's PATH, the workspace kept between turns. */
export function defaultProfile(
  config: Pick<ServiceConfig, "profile" | "harnessCommand">,
): ManagedRuntimeProfile {
  return (
    config.profile ?? {
      workspace: { requirement: "durable", preferredStrategies: ["checkpoint_restore"] },
      outputs: { requirement: "disabled" },
      runtimeCheckpoint: "disabled",
      driver: { type: "ama_worker", process: { command: config.harnessCommand } },
    }
  );
}
