import type { BetaSelfHostedWork } from "@anthropic-ai/sdk/resources/beta/environments/work";
import type { BetaManagedAgentsSession } from "@anthropic-ai/sdk/resources/beta/sessions/sessions";
import type {
  HostLogger,
  ManagedRuntimeHost,
  ManagedRuntimeRunResult,
} from "@open-managed-agents/managed-runtime-host";
import {
  type EnvironmentPackages,
  type ManagedRuntimeError,
  type ManagedRuntimeProfile,
  type RuntimeResourceScope,
  parseRecord,
} from "@open-managed-agents/runtime-resource-contract";
import { isFunction, positiveSafeIntegerSchema } from "@open-managed-agents/runtime-utils";
import * as z from "zod";
import type { HostedInferenceOptions } from "./harness-env.js";
import type { ManagedAgentsClient } from "./sdk-client.js";

/** How one claimed item ended, as {@link ManagedEnvironmentWorkerOptions.onRunResult} sees it. */
export type WorkItemOutcome =
  /** The host ran the item; `result` is its answer (after any conflict retries). */
  | { readonly type: "ran"; readonly result: ManagedRuntimeRunResult; readonly attempts: number }
  /** A health check or terminated session: stopped without running anything. */
  | { readonly type: "skipped"; readonly reason: "healthcheck" | "session_terminated" }
  /** The item could not be run (bad secret, foreign session, profile refused, …); it was stopped. */
  | { readonly type: "rejected"; readonly error: ManagedRuntimeError }
  /**
   * Left unstopped, so the platform issues it again when its lease lapses, never dropped: still `conflict` after
   * every retry, shutdown came first, the driver had no sandbox to give (`insufficient_capacity` at
   * `sandbox-acquire`), or the fence store could not take the fence (`store_unavailable`: `unavailable`,
   * `storage_unwritable` or `timeout` at `fence-acquire`). In the last two nothing ran, and this worker holds the
   * item's slot for `capacityBackoffMs` before claiming again.
   */
  | {
      readonly type: "deferred";
      readonly reason:
        | "conflict_retries_exhausted"
        | "shutdown"
        | "insufficient_capacity"
        | "store_unavailable";
      readonly attempts: number;
    };

/** What {@link ManagedEnvironmentWorkerOptions.onRunResult} receives. */
export interface WorkItemReport {
  readonly workId: string;
  /** Null for a non-session item. */
  readonly scope: RuntimeResourceScope | null;
  readonly lane: "ama_worker" | "openma_supervised" | null;
  readonly outcome: WorkItemOutcome;
}

/** Builds the host for one item; see {@link ManagedEnvironmentWorkerOptions.host}. */
export type ManagedRuntimeHostFactory = (input: {
  readonly scope: RuntimeResourceScope;
  readonly profile: ManagedRuntimeProfile;
  readonly signal: AbortSignal;
}) => ManagedRuntimeHost | Promise<ManagedRuntimeHost>;

/** Backoff of conflict retries. */
export interface ConflictRetryOptions {
  /** Runs tried per item, the first included. @default 8 */
  readonly attempts?: number;
  /** @default 250 */
  readonly baseDelayMs?: number;
  /** @default 15000 */
  readonly maxDelayMs?: number;
}

/** What the host installs into one item's sandbox before the harness (see the host's `environmentPackages`). */
export interface ManagedEnvironmentSetup {
  /** Packages per manager, as `Environment.config.packages` holds them. */
  readonly packages?: EnvironmentPackages;
  /** The catalog image alias, when one is selected; part of the setup markers. */
  readonly sandboxImageAlias?: string;
}

/** Options of {@link createManagedEnvironmentWorker}. Validated once, at creation (`invalid_config`). */
export interface ManagedEnvironmentWorkerOptions {
  /** The caller's SDK client; this worker derives per-credential copies with `withOptions`. */
  readonly client: ManagedAgentsClient;
  readonly environmentId: string;
  /** The environment key: polling credential, and an item's credential when its secret has no sessions token. */
  readonly environmentKey: string;
  /** Tenant workspace written into every scope. */
  readonly workspaceId: string;
  /**
   * The fenced host, or a factory asked once per item (after the profile is known) for a host built on
   * that item's admitted driver ports, as `registry.prepare` gives them.
   */
  readonly host: ManagedRuntimeHost | ManagedRuntimeHostFactory;
  /** The runtime profile of one item. Its harness env gets the `ANTHROPIC_*` work variables added. */
  readonly profileFor: (
    work: BetaSelfHostedWork,
    session: BetaManagedAgentsSession,
  ) => ManagedRuntimeProfile | Promise<ManagedRuntimeProfile>;
  /**
   * The environment's setup for one item: `packages` (`Environment.config.packages`) and the catalog
   * `sandboxImageAlias`, installed by the host before the harness. A self-hosted environment's config on the
   * platform carries only its type (the SDK's `BetaSelfHostedConfig`), so the deployer supplies them here.
   * Absent or `null`: nothing is installed.
   */
  readonly environmentFor?: (
    work: BetaSelfHostedWork,
    session: BetaManagedAgentsSession,
  ) => ManagedEnvironmentSetup | null | Promise<ManagedEnvironmentSetup | null>;
  /** Sent as `Anthropic-Worker-ID` by the poller. */
  readonly workerId?: string;
  /** Items run at once. @default 1 */
  readonly concurrency?: number;
  /**
   * After an item is deferred for `insufficient_capacity` or `store_unavailable`, how long its slot stays taken,
   * so a worker whose driver is full (or whose store is down) claims less and leaves the queue to workers that
   * can run it. @default 5000
   */
  readonly capacityBackoffMs?: number;
  /** Period of the fallback non-blocking poll `run` adds to the long poll. @default 30000 */
  readonly fallbackPollIntervalMs?: number;
  /** Passed to `work.poll` as `reclaim_older_than_ms`. */
  readonly reclaimOlderThanMs?: number;
  /** Managed Agents API origin given to the sandbox when a secret names none. @default the client's baseURL */
  readonly apiBaseUrl?: string;
  /** Work-lease heartbeat period of the supervised lane. @default 20000 */
  readonly heartbeatIntervalMs?: number;
  /** Work-lease TTL asked for by the supervised lane. @default 60 */
  readonly heartbeatTtlSeconds?: number;
  /**
   * `ama_worker` lane: this worker heartbeats the item's Work lease while the host prepares the sandbox (a
   * large restore can outlast the lease the ack started), renews it once more right before the harness
   * starts, stops, and hands the server's `last_heartbeat` to the in-sandbox worker in
   * `OMA_WORK_LAST_HEARTBEAT`, which `oma-ama-worker` continues from. Turn it off for an in-sandbox worker
   * that cannot take the handover: its first heartbeat would then be refused. @default true
   */
  readonly leaseWhilePreparing?: boolean;
  readonly conflictRetry?: ConflictRetryOptions;
  /** How long shutdown lets running items finish before aborting them. @default 30000 */
  readonly shutdownGraceMs?: number;
  /** Apply the hosted-inference projection to every harness env. Absent: not applied. */
  readonly hostedInference?: HostedInferenceOptions;
  /** Standard Webhooks signing key for `handleWebhook`. @default the client's webhookKey */
  readonly webhookKey?: string;
  /** Called once per claimed item when it is done with. Throwing here is logged, never fatal. */
  readonly onRunResult?: (report: WorkItemReport) => void | Promise<void>;
  /** Structured events; never a secret (strings are redacted against every known credential). */
  readonly logger?: HostLogger;
}

const positiveInt = positiveSafeIntegerSchema;
const isClient = (value: unknown) =>
  typeof value === "object" &&
  value !== null &&
  isFunction((value as { withOptions?: unknown }).withOptions) &&
  "beta" in value;
const isHost = (value: unknown) =>
  isFunction(value) ||
  (typeof value === "object" && value !== null && isFunction((value as { run?: unknown }).run));
const isLogger = (value: unknown) =>
  typeof value === "object" &&
  value !== null &&
  ["info", "warn", "error"].every((level) => isFunction((value as Record<string, unknown>)[level]));

const optionsSchema = z
  .object({
    client: z.custom<ManagedAgentsClient>(isClient, "must be an Anthropic client"),
    environmentId: z.string().min(1),
    environmentKey: z.string().min(1, "must not be empty"),
    workspaceId: z.string().min(1),
    host: z.custom<ManagedRuntimeHost | ManagedRuntimeHostFactory>(
      isHost,
      "must be a ManagedRuntimeHost or a function returning one",
    ),
    profileFor: z.custom<ManagedEnvironmentWorkerOptions["profileFor"]>(
      isFunction,
      "must be a function",
    ),
    environmentFor: z
      .custom<NonNullable<ManagedEnvironmentWorkerOptions["environmentFor"]>>(
        isFunction,
        "must be a function",
      )
      .optional(),
    workerId: z.string().min(1).optional(),
    concurrency: positiveInt.default(1),
    capacityBackoffMs: z.number().int().nonnegative().default(5_000),
    fallbackPollIntervalMs: positiveInt.default(30_000),
    reclaimOlderThanMs: positiveInt.optional(),
    apiBaseUrl: z.url({ protocol: /^https?$/ }).optional(),
    heartbeatIntervalMs: positiveInt.default(20_000),
    heartbeatTtlSeconds: positiveInt.default(60),
    leaseWhilePreparing: z.boolean().default(true),
    conflictRetry: z
      .object({
        attempts: positiveInt.default(8),
        baseDelayMs: positiveInt.default(250),
        maxDelayMs: positiveInt.default(15_000),
      })
      .strict()
      .default({ attempts: 8, baseDelayMs: 250, maxDelayMs: 15_000 }),
    shutdownGraceMs: z.number().int().nonnegative().default(30_000),
    hostedInference: z
      .object({ gatewayBaseUrl: z.url({ protocol: /^https?$/ }) })
      .strict()
      .optional(),
    webhookKey: z.string().min(1).optional(),
    onRunResult: z
      .custom<NonNullable<ManagedEnvironmentWorkerOptions["onRunResult"]>>(
        isFunction,
        "must be a function",
      )
      .optional(),
    logger: z.custom<HostLogger>(isLogger, "must be a logger").optional(),
  })
  .strict()
  .refine((options) => options.heartbeatIntervalMs < options.heartbeatTtlSeconds * 1000, {
    message: "must be shorter than heartbeatTtlSeconds",
    path: ["heartbeatIntervalMs"],
  });

/** Options with every default applied. */
export type ResolvedWorkerOptions = z.output<typeof optionsSchema>;

/** Validates options; a bad field throws `invalid_config` naming it (never its value). */
export function resolveWorkerOptions(
  options: ManagedEnvironmentWorkerOptions,
): ResolvedWorkerOptions {
  return parseRecord(optionsSchema, options, {
    record: "environment worker options",
    code: "invalid_config",
  });
}
