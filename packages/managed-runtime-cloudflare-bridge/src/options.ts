import type { BlobStore } from "@open-managed-agents/blob-store";
import type { ProviderManagedRuntimeOptions } from "@open-managed-agents/managed-runtime-sandbox";
import { parseRecord } from "@open-managed-agents/runtime-resource-contract";
import {
  hasMethods,
  isFunction,
  positiveSafeIntegerSchema,
} from "@open-managed-agents/runtime-utils";
import * as z from "zod";
import type { CheckpointProgress } from "./checkpoint/bridge-checkpointer.js";
import type { MemoryBudget } from "./memory-budget.js";
import type { ContainerRuntimeCheck } from "./runtime/runtime-checking-client.js";
import type { RetryPolicy } from "./wire/retry.js";

const MIB = 1024 * 1024;

/** Options of {@link createCloudflareBridgeManagedRuntime}. Validated once, at factory time. */
export interface CloudflareBridgeManagedRuntimeOptions {
  /** Base URL of the operator-deployed Sandbox Bridge (`https://bridge.example.workers.dev`). */
  readonly baseUrl: string;
  /** The bridge's `SANDBOX_API_KEY`. Sent only in the Authorization header; never enters the sandbox. */
  readonly apiKey: string;
  /** Where portable `/workspace` tar archives are kept. */
  readonly checkpointStore: BlobStore;
  /** @default "cloudflare-bridge-workspaces" */
  readonly checkpointKeyPrefix?: string;
  /** tar exclude patterns applied when checkpointing. @default [] */
  readonly checkpointExcludes?: readonly string[];
  /** Largest single request body (file PUT, hydrate). @default 32 MiB */
  readonly maxHydrateBytes?: number;
  /** Workspaces up to this size (measured in the sandbox) use one `/persist` and one `/hydrate`. @default 16 MiB */
  readonly singleRequestBytes?: number;
  /** Part size for larger workspaces. @default 8 MiB */
  readonly partBytes?: number;
  /** Largest accepted checkpoint. @default 10 GiB */
  readonly maxCheckpointBytes?: number;
  /**
   * Limits every checkpoint archive is inspected against before it is stored and again, in full, before
   * any byte of it reaches a sandbox. Crossing one refuses the archive with `archive_rejected`.
   */
  readonly archiveLimits?: {
    /** Entries of any kind. @default 1_000_000 */
    readonly maxEntries?: number;
    /** Sum of regular-file sizes. @default 10 GiB */
    readonly maxBytes?: number;
    /** Size of one regular file. @default 4 GiB */
    readonly maxEntryBytes?: number;
  };
  /**
   * How checkpoint and restore transfers are compressed. `auto`: zstd when both the sandbox and the driver
   * have it (Node's zlib from 22.15, else a `zstd` command on the driver's PATH), else gzip where a sample of
   * the workspace shows it pays; `gzip`: gzip only, where a sample shows it pays; `off`: never.
   * @default "auto"
   */
  readonly compression?: "auto" | "gzip" | "off";
  /** Custom fetch (tests, proxies). */
  readonly fetch?: typeof fetch;
  /** TTL the host renews; the bridge has no provider lease, so renewals are liveness checks. @default 90_000 */
  readonly leaseTtlMs?: number;
  /** Where session outputs are stored. Absent or null: no output capability. */
  readonly outputStore?: BlobStore | null;
  /** @default "cloudflare-bridge-output-candidates" */
  readonly outputKeyPrefix?: string;
  /** Readiness probe override. */
  readonly readiness?: { readonly command?: string; readonly timeoutMs?: number };
  /** Retry policy of idempotent calls (running, file GET, delete). */
  readonly retry?: RetryPolicy;
  /** Largest output `exec` keeps. @default 16 MiB */
  readonly maxExecOutputBytes?: number;
  /** Directory for temporary archive spools. @default the OS temp directory */
  readonly spoolDirectory?: string;
  /**
   * The budget of archive bytes held in memory (restore parts, small archives read whole), shared by every
   * run. @default the process-wide budget of 32 MiB ({@link processMemoryBudget}), shared by every driver
   * of the process
   */
  readonly memoryBudget?: MemoryBudget;
  /** Progress of checkpoint and restore transfers. */
  readonly onProgress?: (progress: CheckpointProgress) => void;
  /**
   * Options of the environment-packages installer that runs `Environment.config.packages` through `exec`
   * (`@open-managed-agents/environment-packages`); `false` builds none. @default {} (its defaults)
   */
  readonly environmentPackages?: ProviderManagedRuntimeOptions["environmentPackages"];
  /**
   * Checks the container runtime behind the bridge, starting nothing, after a call failed as the sandbox's
   * (`sandbox_failed`): a sentence naming the runtime and why it is down, or null when it answers. A down
   * runtime turns the call's error into `unavailable` (context `service: "container_runtime"`). The local
   * stack has one (`LocalBridge.checkContainerRuntime`); Cloudflare's runtime cannot be asked, so there is
   * none, and such failures stay `sandbox_failed`.
   */
  readonly checkContainerRuntime?: ContainerRuntimeCheck;
}

const keyPrefix = z
  .string()
  .min(1)
  .refine(
    (value) => !value.startsWith("/") && !value.endsWith("/"),
    "must not start or end with '/'",
  )
  .refine(
    (value) =>
      value.split("/").every((segment) => segment !== "" && segment !== "." && segment !== ".."),
    "must not contain empty, '.' or '..' segments",
  );
const positiveSafeInteger = positiveSafeIntegerSchema;
const isBlobStore = (value: unknown) => hasMethods(value, ["put", "get", "head", "delete", "list"]);

const isMemoryBudget = (value: unknown) =>
  typeof value === "object" &&
  value !== null &&
  ["acquire", "use"].every((method) => isFunction((value as Record<string, unknown>)[method]));

const optionsSchema = z
  .object({
    baseUrl: z.url({ protocol: /^https?$/, error: "must be an absolute http(s) URL" }),
    apiKey: z.string().min(1, "must not be empty"),
    checkpointStore: z.custom<BlobStore>(isBlobStore, "must be a BlobStore"),
    checkpointKeyPrefix: keyPrefix.default("cloudflare-bridge-workspaces"),
    checkpointExcludes: z.array(z.string().min(1)).default([]),
    maxHydrateBytes: positiveSafeInteger.default(32 * MIB),
    singleRequestBytes: positiveSafeInteger.default(16 * MIB),
    partBytes: positiveSafeInteger.min(64 * 1024, "must be at least 64 KiB").default(8 * MIB),
    maxCheckpointBytes: positiveSafeInteger.default(10 * 1024 * MIB),
    archiveLimits: z
      .object({
        maxEntries: positiveSafeInteger.default(1_000_000),
        maxBytes: positiveSafeInteger.default(10 * 1024 * MIB),
        maxEntryBytes: positiveSafeInteger.default(4 * 1024 * MIB),
      })
      .strict()
      .prefault({}),
    compression: z.enum(["auto", "gzip", "off"]).default("auto"),
    fetch: z.custom<typeof fetch>(isFunction, "must be a function").optional(),
    leaseTtlMs: positiveSafeInteger.default(90_000),
    outputStore: z.custom<BlobStore>(isBlobStore, "must be a BlobStore").nullable().default(null),
    outputKeyPrefix: keyPrefix.default("cloudflare-bridge-output-candidates"),
    readiness: z
      .object({ command: z.string().min(1).optional(), timeoutMs: positiveSafeInteger.optional() })
      .optional(),
    // The installer validates its own options when the composition builds it.
    environmentPackages: z.union([z.literal(false), z.record(z.string(), z.unknown())]).optional(),
    retry: z
      .object({
        attempts: positiveSafeInteger,
        baseDelayMs: z.number().int().nonnegative(),
        maxDelayMs: z.number().int().nonnegative(),
      })
      .optional(),
    maxExecOutputBytes: positiveSafeInteger.default(16 * MIB),
    spoolDirectory: z.string().min(1).optional(),
    memoryBudget: z.custom<MemoryBudget>(isMemoryBudget, "must be a MemoryBudget").optional(),
    onProgress: z
      .custom<(progress: CheckpointProgress) => void>(isFunction, "must be a function")
      .optional(),
    checkContainerRuntime: z
      .custom<ContainerRuntimeCheck>(isFunction, "must be a function")
      .optional(),
  })
  .strict()
  .refine((options) => options.partBytes <= options.maxHydrateBytes, {
    message: "must not exceed maxHydrateBytes",
    path: ["partBytes"],
  });

/** Options with every default applied. */
export type ResolvedCloudflareBridgeOptions = z.output<typeof optionsSchema>;

/** Validates options; a bad field throws `invalid_config` naming it (never its value). */
export function resolveBridgeOptions(
  options: CloudflareBridgeManagedRuntimeOptions,
): ResolvedCloudflareBridgeOptions {
  return parseRecord(optionsSchema, options, {
    record: "cloudflare-bridge options",
    code: "invalid_config",
  });
}
