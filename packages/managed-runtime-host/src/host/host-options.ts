import { parseRecord } from "@open-managed-agents/runtime-resource-contract";
import { positiveSafeIntegerSchema } from "@open-managed-agents/runtime-utils";
import * as z from "zod";
import { type HostLogger, silentLogger } from "../logger.js";
import { hasMethods } from "../stores/store-options.js";
import { type Clock, type Scheduler, systemClock, systemScheduler } from "../time.js";
import type { ManagedRuntimeHostOptions } from "./types.js";

/** Options after validation, with defaults applied. */
export type ResolvedHostOptions = Required<
  Omit<
    ManagedRuntimeHostOptions,
    | "runtimeCheckpoint"
    | "credentialEgress"
    | "sessionInputs"
    | "environmentPackages"
    | "journal"
    | "memoryStores"
  >
> &
  Pick<
    ManagedRuntimeHostOptions,
    | "runtimeCheckpoint"
    | "credentialEgress"
    | "sessionInputs"
    | "environmentPackages"
    | "journal"
    | "memoryStores"
  > & {
    readonly clock: Clock;
    readonly scheduler: Scheduler;
    readonly logger: HostLogger;
  };

/** A value that is an object implementing every named method. */
export function portSchema(methods: readonly string[]) {
  return z.custom<object>((value) => hasMethods(value, methods), {
    message: `must implement ${methods.join(", ")}`,
  });
}

/** The ports a provider's resources bring, checked in host options and in a registry's plan. */
export const providerPortSchemas = {
  sandbox: portSchema([
    "capabilities",
    "acquire",
    "heartbeat",
    "suspend",
    "terminate",
    "reap",
    "inspect",
  ]),
  workspace: portSchema(["capabilities", "materialize", "attach", "checkpoint", "release"]),
  outputs: portSchema([
    "capabilities",
    "prepare",
    "attach",
    "collect",
    "finalize",
    "release",
    "abort",
  ]),
  harnessDriver: portSchema(["driverCapabilities", "run"]),
};

const positiveMs = positiveSafeIntegerSchema;

const hostOptionsSchema = z
  .object({
    ownerId: z.string().min(1, "must not be empty"),
    leaseTtlMs: positiveMs,
    heartbeatIntervalMs: positiveMs,
    callTimeoutMs: positiveMs.optional(),
    cleanupTimeoutMs: positiveMs.optional(),
    sessionInputSyncIntervalMs: positiveMs.optional(),
    fences: portSchema([
      "acquire",
      "renew",
      "isCurrent",
      "isGenerationCurrent",
      "publish",
      "release",
    ]),
    orphans: portSchema(["enqueue", "list", "failed", "resolve"]),
    journal: portSchema([
      "record",
      "setStartRevision",
      "list",
      "listSession",
      "failed",
      "resolve",
    ]).optional(),
    ...providerPortSchemas,
    runtimeCheckpoint: portSchema(["create", "restore"]).optional(),
    credentialEgress: portSchema([
      "capabilities",
      "prepare",
      "attach",
      "revoke",
      "release",
    ]).optional(),
    sessionInputs: portSchema(["materialize", "synchronize"]).optional(),
    environmentPackages: portSchema(["install"]).optional(),
    memoryStores: portSchema(["mount", "synchronize"]).optional(),
    clock: portSchema(["now"]).optional(),
    scheduler: portSchema(["sleep"]).optional(),
    logger: portSchema(["info", "warn", "error"]).optional(),
  })
  .refine((options) => options.heartbeatIntervalMs < options.leaseTtlMs, {
    message: "must be shorter than leaseTtlMs",
    path: ["heartbeatIntervalMs"],
  });

/** Validates host options once; failure is `invalid_config` naming the field. */
export function resolveHostOptions(options: ManagedRuntimeHostOptions): ResolvedHostOptions {
  parseRecord(hostOptionsSchema, options, { record: "host options", code: "invalid_config" });
  return {
    ...options,
    callTimeoutMs: options.callTimeoutMs ?? 30_000,
    cleanupTimeoutMs: options.cleanupTimeoutMs ?? 30_000,
    sessionInputSyncIntervalMs: options.sessionInputSyncIntervalMs ?? 15_000,
    clock: options.clock ?? systemClock,
    scheduler: options.scheduler ?? systemScheduler,
    logger: options.logger ?? silentLogger,
  };
}
