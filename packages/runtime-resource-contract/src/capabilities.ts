import * as z from "zod";

/** How `/workspace` survives between work items. */
export type WorkspaceStrategy =
  | "durable_mount"
  | "retained_runtime"
  | "checkpoint_restore"
  | "ephemeral";
/** How files under `/mnt/session/outputs` reach durable storage. */
export type OutputStrategy = "durable_mount" | "watch_and_upload" | "final_collect";
/** What a runtime checkpoint captures. */
export type RuntimeCheckpointKind = "filesystem" | "process";
/** The harness lanes a driver can run. */
export type HarnessDriverType = "ama_worker" | "openma_supervised";
/** Whether stored outputs survive the loss of the sandbox. */
export type OutputDurability = "durable" | "best_effort";

export const workspaceStrategySchema = z.enum([
  "durable_mount",
  "retained_runtime",
  "checkpoint_restore",
  "ephemeral",
]);
export const outputStrategySchema = z.enum(["durable_mount", "watch_and_upload", "final_collect"]);
export const runtimeCheckpointKindSchema = z.enum(["filesystem", "process"]);
export const harnessDriverTypeSchema = z.enum(["ama_worker", "openma_supervised"]);
export const outputDurabilitySchema = z.enum(["durable", "best_effort"]);

/** What the sandbox port can do with compute itself. */
export interface SandboxResourceCapabilities {
  /** `supported` only when `suspend` keeps a runtime that a later acquire can continue. */
  readonly suspendResume: "supported" | "unsupported";
  /** Whether `terminate` reliably stops compute, or only asks the provider to. */
  readonly hardTerminate: "supported" | "best_effort";
  /** Runtime checkpoint kinds a {@link RuntimeCheckpointPort} can create. Empty until one is wired. */
  readonly runtimeCheckpoints: readonly RuntimeCheckpointKind[];
}

/** Workspace strategies the workspace port implements. */
export interface WorkspacePersistenceCapabilities {
  readonly strategies: readonly WorkspaceStrategy[];
}

/** One output strategy and how durable its results are. */
export interface OutputStrategyCapability {
  readonly strategy: OutputStrategy;
  readonly durability: OutputDurability;
}

/** Output strategies the output port implements. */
export interface SessionOutputCapabilities {
  readonly strategies: readonly OutputStrategyCapability[];
}

/** Harness lanes the harness driver port can run. */
export interface SandboxHarnessDriverCapabilities {
  readonly drivers: readonly HarnessDriverType[];
}

/** The four capability sets plan resolution reads. */
export interface ManagedRuntimeResourceCapabilities {
  readonly sandbox: SandboxResourceCapabilities;
  readonly workspace: WorkspacePersistenceCapabilities;
  readonly outputs: SessionOutputCapabilities;
  readonly harness: SandboxHarnessDriverCapabilities;
}

export const sandboxResourceCapabilitiesSchema = z.object({
  suspendResume: z.enum(["supported", "unsupported"]),
  hardTerminate: z.enum(["supported", "best_effort"]),
  runtimeCheckpoints: z.array(runtimeCheckpointKindSchema),
});

export const managedRuntimeResourceCapabilitiesSchema = z.object({
  sandbox: sandboxResourceCapabilitiesSchema,
  workspace: z.object({ strategies: z.array(workspaceStrategySchema) }),
  outputs: z.object({
    strategies: z.array(
      z.object({ strategy: outputStrategySchema, durability: outputDurabilitySchema }),
    ),
  }),
  harness: z.object({ drivers: z.array(harnessDriverTypeSchema) }),
});
