import {
  MEMORY_STORE_MODES,
  harnessDriverTypeSchema,
  outputStrategySchema,
  runtimeCheckpointKindSchema,
  workspaceStrategySchema,
} from "@open-managed-agents/runtime-resource-contract";
import type {
  HarnessDriverType,
  MemoryStoreMode,
  OutputStrategy,
  RuntimeCheckpointKind,
  WorkspaceStrategy,
} from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import { type ConformanceRowProvenance, conformanceRowProvenanceSchema } from "./row-provenance.js";

/**
 * Facts about a driver's tool-sandbox surface that the managed ports cannot show: how commands and files
 * travel, and which provider features are deliberately not used. A row lists each fact it knows as
 * available or unavailable; a fact in neither list is unknown, never assumed.
 */
export const SANDBOX_PORT_FACTS = [
  /** Processes with live stdin, stdout and stderr pipes (`spawnDuplexProcess`). */
  "duplex_process",
  /** Writing to the stdin of a running process as a stream. */
  "streaming_process_stdin",
  /** Interactive stdin without allocating a PTY (line protocols break under PTY echo). */
  "interactive_stdin_without_pty",
  /** Commands run as an argv list whose output arrives as server-sent events. */
  "argv_sse_process",
  /** The driver reaches the provider through an HTTP bridge it does not own. */
  "http_bridge",
  /** Text file read and write confined to `/workspace`. */
  "workspace_file_io",
  /** Byte-exact file read and write (`readFileBytes` / `writeFileBytes`). */
  "file_bytes_io",
  /** Workspace checkpoints are tar archives stored in a blob store. */
  "workspace_tar_checkpoint",
  /** Provider-native workspace backups (`createWorkspaceBackup`). */
  "workspace_backup",
  /** Provider mounts `/mnt/session/outputs` durably. */
  "session_output_mount",
  /** The provider has its own renewable lease on the runtime. */
  "provider_lease",
  /** Reconnecting to the same runtime from a runtime-scoped handle. */
  "runtime_scoped_resume",
  /** Capturing process memory as a checkpoint. */
  "process_memory_checkpoint",
  /** Booting from a provider template or snapshot named by the operator. */
  "provider_template",
  /** Booting from a container image named by the operator. */
  "container_image",
  /** Cloning a live sandbox into another session. No port exists for it. */
  "sandbox_fork",
] as const;

/** One of {@link SANDBOX_PORT_FACTS}. */
export type SandboxPortFact = (typeof SANDBOX_PORT_FACTS)[number];

/** How a provider's compute lifecycle relates to the host. */
export interface ConformanceLifecycle {
  /** `host-fenced`: the host's fence governs the lease; `provider-only`: only the provider's own lease. */
  readonly lease: "host-fenced" | "provider-only" | "unavailable";
  readonly suspendResume: "supported" | "unsupported" | "provider-specific";
  /** `provider-specific` is how a `best_effort` hard terminate is recorded. */
  readonly hardTerminate: "supported" | "provider-specific" | "unavailable";
  /** `host-managed`: failed terminates become orphans reaped from a token-free lease. */
  readonly orphanReap: "host-managed" | "provider-specific" | "unavailable";
}

/** Durability of a workspace or output column. */
export type ConformanceDurability = "durable" | "best_effort" | "unavailable";

/** One row of the provider conformance catalog. */
export interface ManagedRuntimeProviderConformance {
  /** Provider id; equals the driver descriptor's `provider`. */
  readonly id: string;
  readonly managedRuntime: boolean;
  readonly status: "managed-runtime" | "sandbox-port-only";
  /** Harness lanes the driver runs. */
  readonly driverLanes: readonly HarnessDriverType[];
  readonly lifecycle: ConformanceLifecycle;
  readonly workspace: {
    readonly strategies: readonly WorkspaceStrategy[];
    readonly durability: ConformanceDurability;
  };
  readonly outputs: {
    readonly strategies: readonly OutputStrategy[];
    readonly durability: ConformanceDurability;
  };
  /** Runtime checkpoint kinds; empty until a `RuntimeCheckpointPort` is wired. */
  readonly runtimeCheckpoints: readonly RuntimeCheckpointKind[];
  /**
   * How memory stores reach `/mnt/memory/<storeName>/` (`mount` or `file_sync`), as the descriptor claims
   * and the live memory-stores port confirms. Absent: not claimed; runs that carry memory stores are refused.
   */
  readonly memoryStores?: MemoryStoreMode;
  readonly sandboxPortFacts: {
    readonly available: readonly SandboxPortFact[];
    readonly unavailable: readonly SandboxPortFact[];
  };
  /** Why the row looks the way it does, when that is not obvious from the columns. */
  readonly reason?: string;
  /** Whether the row is derived from a driver in this repository (and checked) or declared from documentation. */
  readonly provenance: ConformanceRowProvenance;
}

const durabilitySchema = z.enum(["durable", "best_effort", "unavailable"]);
const factSchema = z.enum(SANDBOX_PORT_FACTS);
const uniqueList = <T extends z.ZodType>(item: T) =>
  z
    .array(item)
    .refine((values) => new Set(values).size === values.length, "must not repeat a value");

/** Schema of the two fact lists: known facts only, each in at most one list. */
export const sandboxPortFactsSchema = z
  .object({ available: uniqueList(factSchema), unavailable: uniqueList(factSchema) })
  .refine(
    (facts) => facts.available.every((fact) => !facts.unavailable.includes(fact)),
    "a fact cannot be both available and unavailable",
  );

/** Schema of a {@link ManagedRuntimeProviderConformance} row. */
export const managedRuntimeProviderConformanceSchema = z
  .object({
    id: z.string().min(1, "must not be empty"),
    managedRuntime: z.boolean(),
    status: z.enum(["managed-runtime", "sandbox-port-only"]),
    driverLanes: uniqueList(harnessDriverTypeSchema),
    lifecycle: z.object({
      lease: z.enum(["host-fenced", "provider-only", "unavailable"]),
      suspendResume: z.enum(["supported", "unsupported", "provider-specific"]),
      hardTerminate: z.enum(["supported", "provider-specific", "unavailable"]),
      orphanReap: z.enum(["host-managed", "provider-specific", "unavailable"]),
    }),
    workspace: z.object({
      strategies: uniqueList(workspaceStrategySchema),
      durability: durabilitySchema,
    }),
    outputs: z.object({
      strategies: uniqueList(outputStrategySchema),
      durability: durabilitySchema,
    }),
    runtimeCheckpoints: uniqueList(runtimeCheckpointKindSchema),
    memoryStores: z.enum(MEMORY_STORE_MODES).optional(),
    sandboxPortFacts: sandboxPortFactsSchema,
    reason: z.string().min(1).optional(),
    provenance: conformanceRowProvenanceSchema,
  })
  .refine((row) => row.managedRuntime === (row.status === "managed-runtime"), {
    message: "managedRuntime must be true exactly when status is managed-runtime",
    path: ["managedRuntime"],
  })
  .refine((row) => !row.managedRuntime || row.driverLanes.length > 0, {
    message: "a managed runtime runs at least one harness lane",
    path: ["driverLanes"],
  });
