import {
  type CreateManagedRuntimeProviderDriver,
  MANAGED_RUNTIME_PROVIDER_PLACEMENTS,
  type ManagedRuntimeProviderDriverPort,
  type ManagedRuntimeProviderPlacement,
  isSecretBearingKey,
  parseRecord,
} from "@open-managed-agents/runtime-resource-contract";
import {
  hasMethods,
  isFunction,
  positiveSafeIntegerSchema,
} from "@open-managed-agents/runtime-utils";
import * as z from "zod";
import { CONFORMANCE_CASE_IDS, type ConformanceCaseId } from "../cases/case-catalog.js";
import {
  type ManagedRuntimeProviderConformance,
  managedRuntimeProviderConformanceSchema,
} from "../catalog/conformance-row.js";

/** How the suite obtains the driver through the real loader. */
export interface ConformanceDriverModule {
  /** Provider id the deployment configures; must equal the descriptor's. */
  readonly provider: string;
  /** Package or file that exports `createManagedRuntimeProviderDriver`. */
  readonly moduleSpecifier: string;
  /** Replaces `import()`, e.g. for bundlers or tests. */
  readonly importModule?: (specifier: string) => Promise<unknown>;
}

/** Commands the suite declares as harness processes. The scripts are POSIX `sh`. */
export interface ConformanceHarnessOptions {
  /** Shell that runs the scripts with `-c`; an absolute path or a name on `PATH`. @default "sh" */
  readonly shell?: string;
  /** A harness command that must not exist in the sandbox. @default "openma-conformance-missing-harness" */
  readonly missingCommand?: string;
  /** Extra environment for every harness process, e.g. a `PATH` for the shell. @default {} */
  readonly env?: Readonly<Record<string, string>>;
}

/** Deadlines and intervals of the suite. */
export interface ConformanceTimeouts {
  /** Deadline of one case. @default 60_000 */
  readonly caseMs?: number;
  /** Host heartbeat and fence renewal period; each heartbeat must answer within it. @default 1_000 */
  readonly heartbeatIntervalMs?: number;
  /** Host fence time-to-live. @default 30_000 */
  readonly leaseTtlMs?: number;
}

/**
 * Options of the conformance suite and runner. Validated once; failure is `invalid_config` naming the field.
 * `TFactoryOptions` is inferred from `driver` (a factory with typed options) and checks `factoryOptions`.
 */
export interface ManagedRuntimeConformanceOptions<TFactoryOptions = unknown> {
  /** Name shown in the suite title and reports. */
  readonly name: string;
  /** The driver factory (the package's `createManagedRuntimeProviderDriver`) or a driver. One of `driver` and `loadDriver`. */
  readonly driver?:
    | CreateManagedRuntimeProviderDriver<TFactoryOptions>
    | ManagedRuntimeProviderDriverPort;
  /** Loads the driver through `loadManagedRuntimeProviderDriver`. One of `driver` and `loadDriver`. */
  readonly loadDriver?: ConformanceDriverModule;
  /** Passed to the driver factory. Values under secret-looking keys are scanned for in every record. */
  readonly factoryOptions?: TFactoryOptions;
  /** Non-secret provider configuration passed to `create`. @default {} */
  readonly providerConfig?: Readonly<Record<string, unknown>>;
  /** Placement to test. @default the descriptor's first placement */
  readonly placement?: ManagedRuntimeProviderPlacement;
  readonly harness?: ConformanceHarnessOptions;
  readonly timeouts?: ConformanceTimeouts;
  /** More strings that must never appear in a lease, checkpoint, manifest, orphan record or log field. */
  readonly secrets?: readonly string[];
  /** The row to compare with when the provider has no row in the catalog. */
  readonly expectedRow?: ManagedRuntimeProviderConformance;
  /** Runs only these cases. Every other case is reported as not run, never as passed. @default every case */
  readonly cases?: readonly ConformanceCaseId[];
}

/** Options after validation, with defaults applied. */
export interface ResolvedConformanceOptions {
  readonly name: string;
  readonly driver:
    | CreateManagedRuntimeProviderDriver
    | ManagedRuntimeProviderDriverPort
    | undefined;
  readonly loadDriver: ConformanceDriverModule | undefined;
  readonly factoryOptions: unknown;
  readonly providerConfig: Readonly<Record<string, unknown>>;
  readonly placement: ManagedRuntimeProviderPlacement | undefined;
  readonly harness: Required<ConformanceHarnessOptions>;
  readonly timeouts: Required<ConformanceTimeouts>;
  readonly secrets: readonly string[];
  readonly expectedRow: ManagedRuntimeProviderConformance | undefined;
  readonly cases: readonly ConformanceCaseId[];
}

const isDriverPort = (value: unknown): boolean =>
  typeof value === "object" && hasMethods(value, ["descriptor", "create"]);
const positiveMs = positiveSafeIntegerSchema;
const DEFAULT_TIMEOUTS: Required<ConformanceTimeouts> = {
  caseMs: 60_000,
  heartbeatIntervalMs: 1_000,
  leaseTtlMs: 30_000,
};

const optionsSchema = z
  .object({
    name: z.string().min(1, "must not be empty"),
    driver: z
      .custom<ResolvedConformanceOptions["driver"]>(
        (value) => isFunction(value) || isDriverPort(value),
        "must be a driver factory or a driver",
      )
      .optional(),
    loadDriver: z
      .object({
        provider: z.string().min(1, "must not be empty"),
        moduleSpecifier: z.string().min(1, "must not be empty"),
        importModule: z
          .custom<(specifier: string) => Promise<unknown>>(isFunction, "must be a function")
          .optional(),
      })
      .optional(),
    factoryOptions: z.unknown().optional(),
    providerConfig: z.record(z.string(), z.unknown()).optional(),
    placement: z.enum(MANAGED_RUNTIME_PROVIDER_PLACEMENTS).optional(),
    harness: z
      .object({
        shell: z.string().min(1).optional(),
        missingCommand: z.string().min(1).optional(),
        env: z.record(z.string(), z.string()).optional(),
      })
      .strict()
      .optional(),
    timeouts: z
      .object({
        caseMs: positiveMs.optional(),
        heartbeatIntervalMs: positiveMs.optional(),
        leaseTtlMs: positiveMs.optional(),
      })
      .strict()
      .optional(),
    secrets: z.array(z.string()).optional(),
    expectedRow: managedRuntimeProviderConformanceSchema.optional(),
    cases: z
      .array(z.enum(CONFORMANCE_CASE_IDS as [ConformanceCaseId, ...ConformanceCaseId[]]))
      .min(1)
      .optional(),
  })
  .strict()
  .refine((options) => (options.driver === undefined) !== (options.loadDriver === undefined), {
    message: "exactly one of driver and loadDriver is required",
    path: ["driver"],
  })
  .refine(
    (options) =>
      (options.timeouts?.heartbeatIntervalMs ?? DEFAULT_TIMEOUTS.heartbeatIntervalMs) <
      (options.timeouts?.leaseTtlMs ?? DEFAULT_TIMEOUTS.leaseTtlMs),
    {
      message: "must be shorter than leaseTtlMs",
      path: ["timeouts", "heartbeatIntervalMs"],
    },
  );

/** Validates suite options once, at definition time. */
export function resolveConformanceOptions<TFactoryOptions>(
  options: ManagedRuntimeConformanceOptions<TFactoryOptions>,
): ResolvedConformanceOptions {
  const parsed = parseRecord(optionsSchema, options, {
    record: "conformance suite options",
    code: "invalid_config",
  });
  return {
    name: parsed.name,
    // The factory is called with exactly `factoryOptions`, whose type `TFactoryOptions` checked.
    driver: options.driver as ResolvedConformanceOptions["driver"],
    loadDriver: options.loadDriver,
    factoryOptions: options.factoryOptions,
    providerConfig: parsed.providerConfig ?? {},
    placement: parsed.placement,
    harness: {
      shell: "sh",
      missingCommand: "openma-conformance-missing-harness",
      env: {},
      ...parsed.harness,
    },
    timeouts: { ...DEFAULT_TIMEOUTS, ...parsed.timeouts },
    secrets: [...(parsed.secrets ?? []), ...secretValues(options.factoryOptions)],
    expectedRow: parsed.expectedRow,
    cases: parsed.cases ?? CONFORMANCE_CASE_IDS,
  };
}

/** String values held under secret-looking keys anywhere in `value`. */
function secretValues(value: unknown, depth = 0): string[] {
  if (depth > 8 || typeof value !== "object" || value === null) return [];
  const found: string[] = [];
  for (const [key, child] of Object.entries(value)) {
    if (typeof child === "string" && isSecretBearingKey(key) && child.length > 0) found.push(child);
    else found.push(...secretValues(child, depth + 1));
  }
  return found;
}
