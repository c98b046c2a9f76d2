import {
  hasMethods,
  isFunction,
  positiveSafeIntegerSchema,
} from "@open-managed-agents/runtime-utils";
import * as z from "zod";
import type { BlobStore } from "@open-managed-agents/blob-store";
import {
  type HarnessDriverType,
  type ManagedRuntimeProfile,
  type OutputDurability,
  type RuntimeResourceScope,
  type SandboxCheckpointKind,
  type SandboxResourceCapabilities,
  harnessDriverTypeSchema,
  managedRuntimeProfileSchema,
  nonEmptyString,
  outputDurabilitySchema,
  parseRecord,
  sandboxResourceCapabilitiesSchema,
  MEMORY_STORE_MODES,
  type MemoryStoreMode,
} from "@open-managed-agents/runtime-resource-contract";
import type { EnvironmentPackagesInstallerOptions } from "@open-managed-agents/environment-packages";
import type {
  ManagedSandboxRuntime,
  SandboxFactoryContext,
  SandboxFactoryEnv,
  SandboxProviderPort,
} from "@open-managed-agents/sandbox";
import { keyPrefixProblem } from "./outputs/output-keys.js";

/** Workspace strategies this composition implements. */
export type ProviderWorkspaceStrategy = "checkpoint_restore" | "retained_runtime";

/** Default limit on the number of output files one work item may collect. */
export const DEFAULT_MAX_OUTPUT_FILES = 10_000;
/** Default limit on the total bytes of one work item's outputs: 10 GiB. */
export const DEFAULT_MAX_OUTPUT_BYTES = 10 * 1024 ** 3;

/** Session outputs collected at the end of a work item (`final_collect`). */
export interface ProviderManagedRuntimeOutputsOptions {
  /** Where blobs and manifests are stored. */
  readonly store: BlobStore;
  /** Key prefix of blobs and manifests, fixed or per scope. No leading or trailing `/`, no empty, `.` or `..` segment. */
  readonly keyPrefix: string | ((scope: RuntimeResourceScope) => string);
  /** What the output capability advertises. @default "durable" */
  readonly durability?: OutputDurability;
  /** Most files one collect accepts. @default 10_000 */
  readonly maxFiles?: number;
  /** Most bytes one collect accepts, summed over all files. @default 10 GiB */
  readonly maxBytes?: number;
}

/** The readiness probe run in `acquire` before a lease is returned. */
export interface ProviderManagedRuntimeReadinessOptions {
  /** Executable to probe. @default the profile's harness command (`process.command` or `supervisor.command`) */
  readonly command?: string;
  /** Deadline of the probe. @default 10_000 */
  readonly timeoutMs?: number;
}

/** Options of {@link createProviderManagedRuntime}. Validated once, at factory time. */
export interface ProviderManagedRuntimeOptions<
  R extends ManagedSandboxRuntime = ManagedSandboxRuntime,
> {
  /** Provider id written into every lease; must equal `provider.provider` and the driver descriptor's `provider`. */
  readonly providerName: string;
  readonly provider: SandboxProviderPort<R>;
  /** Host-side context for creating, restoring and reconnecting runtimes of a scope. */
  readonly context: (scope: RuntimeResourceScope) => SandboxFactoryContext;
  /** Provider environment passed to every provider call. */
  readonly env?: SandboxFactoryEnv;
  /** TTL sent with every `renewLease`. */
  readonly leaseTtlMs: number;
  /** What the sandbox port advertises. `runtimeCheckpoints` must be empty: no runtime checkpoint port is wired here. */
  readonly sandboxCapabilities: SandboxResourceCapabilities;
  readonly workspace: {
    /** Non-empty. `retained_runtime` requires `sandboxCapabilities.suspendResume: "supported"` and the reverse. */
    readonly strategies: readonly ProviderWorkspaceStrategy[];
    /** Kind passed to `runtime.suspend` for `retained_runtime`. @default "filesystem" */
    readonly retainedSuspendKind?: SandboxCheckpointKind;
  };
  /** Absent: no output capability, and the output port fails closed with `capability_unsupported`. */
  readonly outputs?: ProviderManagedRuntimeOutputsOptions;
  readonly readiness?: ProviderManagedRuntimeReadinessOptions;
  /**
   * Harness lanes to advertise. `ama_worker` runs through the harness driver port; `openma_supervised`
   * exposes the supervisor transport (the host wraps it into a supervised driver). Only list it when the
   * provider's duplex processes carry stdin.
   */
  readonly drivers: readonly HarnessDriverType[];
  /** Profile of the work the composition serves; supplies the default readiness command. */
  readonly profile?: ManagedRuntimeProfile;
  /**
   * The environment-packages installer (over `exec`), with its options; `false` builds no installer, and the
   * host then refuses environments that list packages. @default {} (the installer's defaults)
   */
  readonly environmentPackages?: EnvironmentPackagesInstallerOptions | false;
  /**
   * How runtimes put memory stores at `/mnt/memory/<storeName>/`: `mount` through the runtime's own
   * `mountMemoryStore`, `file_sync` by copying over `exec`/`readFile`/`writeFile`. Absent: no memory-stores
   * port, nothing claimed, and the host refuses runs that carry stores.
   */
  readonly memoryStores?: MemoryStoreMode;
}

/** Options with every default applied. */
export interface ResolvedProviderManagedRuntimeOptions<
  R extends ManagedSandboxRuntime = ManagedSandboxRuntime,
> extends ProviderManagedRuntimeOptions<R> {
  readonly workspace: {
    readonly strategies: readonly ProviderWorkspaceStrategy[];
    readonly retainedSuspendKind: SandboxCheckpointKind;
  };
  readonly outputs?: Required<ProviderManagedRuntimeOutputsOptions>;
}

const positiveInteger = positiveSafeIntegerSchema;
const uniqueList = <T extends z.ZodType>(item: T) =>
  z
    .array(item)
    .min(1, "must not be empty")
    .refine((values) => new Set(values).size === values.length, "must not repeat a value");

const optionsSchema = z
  .object({
    providerName: nonEmptyString,
    provider: z.custom<SandboxProviderPort>(
      (value) =>
        hasMethods(value, ["create", "resume", "restore", "connect"]) &&
        typeof (value as { provider?: unknown }).provider === "string",
      "must be a SandboxProviderPort (provider, create, resume, restore, connect)",
    ),
    context: z.custom<(scope: RuntimeResourceScope) => SandboxFactoryContext>(
      isFunction,
      "must be a function of the scope",
    ),
    env: z.record(z.string(), z.string().optional()).optional(),
    leaseTtlMs: positiveInteger,
    sandboxCapabilities: sandboxResourceCapabilitiesSchema,
    workspace: z.object({
      strategies: uniqueList(z.enum(["checkpoint_restore", "retained_runtime"])),
      retainedSuspendKind: z.enum(["filesystem", "memory"]).default("filesystem"),
    }),
    outputs: z
      .object({
        store: z.custom<BlobStore>(
          (value) => hasMethods(value, ["put", "get", "head"]),
          "must be a BlobStore",
        ),
        keyPrefix: z.union([
          z.string().superRefine((prefix, context) => {
            const problem = keyPrefixProblem(prefix);
            if (problem) context.addIssue({ code: "custom", message: problem });
          }),
          z.custom<(scope: RuntimeResourceScope) => string>(
            isFunction,
            "must be a string or a function of the scope",
          ),
        ]),
        durability: outputDurabilitySchema.default("durable"),
        maxFiles: positiveInteger.default(DEFAULT_MAX_OUTPUT_FILES),
        maxBytes: positiveInteger.default(DEFAULT_MAX_OUTPUT_BYTES),
      })
      .optional(),
    readiness: z
      .object({ command: nonEmptyString.optional(), timeoutMs: positiveInteger.optional() })
      .optional(),
    drivers: uniqueList(harnessDriverTypeSchema),
    profile: managedRuntimeProfileSchema.optional(),
    // The installer validates its own options when the composition builds it.
    environmentPackages: z.union([z.literal(false), z.record(z.string(), z.unknown())]).optional(),
    memoryStores: z.enum(MEMORY_STORE_MODES).optional(),
  })
  .superRefine((options, context) => {
    if (options.provider.provider !== options.providerName) {
      context.addIssue({
        code: "custom",
        path: ["provider", "provider"],
        message: `must equal providerName "${options.providerName}"`,
      });
    }
    if (options.sandboxCapabilities.runtimeCheckpoints.length > 0) {
      context.addIssue({
        code: "custom",
        path: ["sandboxCapabilities", "runtimeCheckpoints"],
        message: "must be empty: no runtime checkpoint port is wired",
      });
    }
    const retained = options.workspace.strategies.includes("retained_runtime");
    if (retained !== (options.sandboxCapabilities.suspendResume === "supported")) {
      context.addIssue({
        code: "custom",
        path: ["sandboxCapabilities", "suspendResume"],
        message: 'must be "supported" exactly when workspace.strategies lists retained_runtime',
      });
    }
  });

/**
 * Validates options and applies defaults. Throws `invalid_config` naming the first failing field.
 * Functions and ports are kept by reference.
 */
export function resolveProviderManagedRuntimeOptions<R extends ManagedSandboxRuntime>(
  options: ProviderManagedRuntimeOptions<R>,
): ResolvedProviderManagedRuntimeOptions<R> {
  const parsed = parseRecord(optionsSchema, options, {
    record: "provider managed runtime options",
    code: "invalid_config",
  });
  const { outputs, ...rest } = options;
  const resolved: ResolvedProviderManagedRuntimeOptions<R> = {
    ...rest,
    // Advertised values come from the parsed copy, so a later change to the caller's objects cannot drift them.
    sandboxCapabilities: parsed.sandboxCapabilities,
    drivers: parsed.drivers,
    workspace: {
      strategies: parsed.workspace.strategies,
      retainedSuspendKind: parsed.workspace.retainedSuspendKind,
    },
  };
  if (!outputs || !parsed.outputs) return resolved;
  const { durability, maxFiles, maxBytes } = parsed.outputs;
  return {
    ...resolved,
    outputs: { store: outputs.store, keyPrefix: outputs.keyPrefix, durability, maxFiles, maxBytes },
  };
}
