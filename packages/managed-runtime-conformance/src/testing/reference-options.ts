import {
  MANAGED_RUNTIME_PROVIDER_PLACEMENTS,
  type ManagedRuntimeProviderPlacement,
  parseRecord,
} from "@open-managed-agents/runtime-resource-contract";
import type { LocalSubprocessRuntime } from "@open-managed-agents/local-confinement/local-subprocess";
import type { ManagedSandboxRuntime } from "@open-managed-agents/sandbox";
import * as z from "zod";

/** Provider id of the reference driver unless options name another. */
export const REFERENCE_PROVIDER = "conformance-reference";

/** Options of the reference driver. Every claim can be switched off, so both branches of each case run. */
export interface ReferenceDriverOptions {
  /** Provider id in the descriptor and every lease. @default "conformance-reference" */
  readonly provider?: string;
  /** Host directory for runtimes and checkpoints. @default a new directory under the OS temp dir */
  readonly rootDir?: string;
  /** Placements listed in the descriptor. @default ["in_process"] */
  readonly placements?: readonly ManagedRuntimeProviderPlacement[];
  /** Claims `suspendResume` and the `retained_runtime` workspace strategy. @default true */
  readonly suspend?: boolean;
  /** Claims `final_collect` session outputs. @default true */
  readonly outputs?: boolean;
  /** Claims the `openma_supervised` lane through a supervisor transport. @default true */
  readonly supervised?: boolean;
  /** Wires a filesystem `RuntimeCheckpointPort` and claims `runtimeCheckpoints: ["filesystem"]`. @default false */
  readonly runtimeCheckpoint?: boolean;
  /**
   * Claims `enforced` credential egress with a port that records bindings but filters no traffic. It
   * exists to exercise the suite's claimed egress branch; it never describes a real backend.
   * @default false
   */
  readonly simulateEnforcedEgress?: boolean;
  /** Claims `file_sync` memory stores, copied into `/mnt/memory/<store>/` and written back from the host side. @default false */
  readonly memoryStores?: boolean;
  /** Deadline of the readiness probe. @default 10_000 */
  readonly readinessTimeoutMs?: number;
  /** Wraps every runtime the driver starts or reconnects to; used to inject faults. */
  readonly decorateRuntime?: (runtime: LocalSubprocessRuntime) => ManagedSandboxRuntime;
}

/** {@link ReferenceDriverOptions} with defaults applied. */
export interface ResolvedReferenceDriverOptions {
  readonly provider: string;
  readonly rootDir: string | undefined;
  readonly placements: readonly ManagedRuntimeProviderPlacement[];
  readonly suspend: boolean;
  readonly outputs: boolean;
  readonly supervised: boolean;
  readonly runtimeCheckpoint: boolean;
  readonly simulateEnforcedEgress: boolean;
  readonly memoryStores: boolean;
  readonly readinessTimeoutMs: number;
  readonly decorateRuntime: (runtime: LocalSubprocessRuntime) => ManagedSandboxRuntime;
}

const optionsSchema = z
  .object({
    provider: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]*$/, "must be lowercase letters, digits and dashes")
      .optional(),
    rootDir: z.string().startsWith("/", "must be an absolute host path").optional(),
    placements: z.array(z.enum(MANAGED_RUNTIME_PROVIDER_PLACEMENTS)).min(1).optional(),
    suspend: z.boolean().optional(),
    outputs: z.boolean().optional(),
    supervised: z.boolean().optional(),
    runtimeCheckpoint: z.boolean().optional(),
    simulateEnforcedEgress: z.boolean().optional(),
    memoryStores: z.boolean().optional(),
    readinessTimeoutMs: z.number().int().positive().optional(),
    decorateRuntime: z
      .custom<(runtime: LocalSubprocessRuntime) => ManagedSandboxRuntime>(
        (value) => typeof value === "function",
        "must be a function",
      )
      .optional(),
  })
  .strict();

/** Validates options once; throws `invalid_config` naming the field. */
export function resolveReferenceDriverOptions(options: unknown): ResolvedReferenceDriverOptions {
  const parsed = parseRecord(optionsSchema, options ?? {}, {
    record: "reference driver options",
    code: "invalid_config",
  });
  return {
    provider: parsed.provider ?? REFERENCE_PROVIDER,
    rootDir: parsed.rootDir,
    placements: parsed.placements ?? ["in_process"],
    suspend: parsed.suspend ?? true,
    outputs: parsed.outputs ?? true,
    supervised: parsed.supervised ?? true,
    runtimeCheckpoint: parsed.runtimeCheckpoint ?? false,
    simulateEnforcedEgress: parsed.simulateEnforcedEgress ?? false,
    memoryStores: parsed.memoryStores ?? false,
    readinessTimeoutMs: parsed.readinessTimeoutMs ?? 10_000,
    decorateRuntime: parsed.decorateRuntime ?? ((runtime) => runtime),
  };
}
