import * as z from "zod";
import {
  type HarnessDriverType,
  type OutputStrategy,
  type RuntimeCheckpointKind,
  type WorkspaceStrategy,
  outputStrategySchema,
  runtimeCheckpointKindSchema,
  workspaceStrategySchema,
} from "./capabilities.js";
import { nonEmptyString } from "./json.js";

/** A process the harness driver starts inside the sandbox. */
export interface RuntimeProcessDeclaration {
  /** Executable: an absolute path inside the sandbox, or a name resolved on `PATH`. */
  readonly command: string;
  readonly args?: readonly string[];
  /** Working directory inside the sandbox. @default "/workspace" */
  readonly cwd?: string;
  /** Environment for the process. Values may be secrets: hosts use key names only, never values, in identities and logs. */
  readonly env?: Readonly<Record<string, string>>;
}

/** Runs an unmodified AMA worker as one process. */
export interface AmaWorkerDriverDeclaration {
  readonly type: "ama_worker";
  readonly process: RuntimeProcessDeclaration;
}

/** Runs a harness under a supervisor that speaks `openma-harness-supervisor-v1` over NDJSON stdio. */
export interface OpenmaSupervisedDriverDeclaration {
  readonly type: "openma_supervised";
  readonly protocol: "openma-harness-supervisor-v1";
  /** The supervisor process. It never receives the fence token. */
  readonly supervisor: RuntimeProcessDeclaration;
  /** Identity of the supervised harness; part of the runtime-checkpoint identity. */
  readonly harness: { readonly id: string; readonly version: string };
  /** Time allowed between start and the `ready` event. */
  readonly readyTimeoutMs: number;
  /** Longest allowed gap between `heartbeat` events. */
  readonly heartbeatTimeoutMs: number;
  /** Time allowed between `drain` and `drained`. */
  readonly drainTimeoutMs: number;
}

/** The harness a profile asks for. */
export type HarnessDriverDeclaration =
  | AmaWorkerDriverDeclaration
  | OpenmaSupervisedDriverDeclaration;

/** What durability a work item needs from its workspace. */
export type WorkspaceRequirement = "durable" | "continuable" | "ephemeral";
/** What a work item needs from session outputs. */
export type OutputRequirement = "durable" | "best_effort" | "disabled";
/** Whether a runtime checkpoint must, may or must not be taken. */
export type RuntimeCheckpointRequirement = "required" | "optional" | "disabled";
/** Whether brokered credential egress must be enforced. Omitted means `disabled`. */
export type CredentialEgressRequirement = "required" | "best_effort" | "disabled";

/**
 * The requirements of one work item. The registry admits a profile against a driver's descriptor and
 * live ports before any compute is allocated; the host resolves it into a {@link ManagedRuntimePlan}.
 */
export interface ManagedRuntimeProfile {
  readonly workspace: {
    readonly requirement: WorkspaceRequirement;
    /** Ordered preference, filtered against what the requirement allows. */
    readonly preferredStrategies?: readonly WorkspaceStrategy[];
  };
  readonly outputs: {
    readonly requirement: OutputRequirement;
    readonly preferredStrategies?: readonly OutputStrategy[];
  };
  readonly runtimeCheckpoint: RuntimeCheckpointRequirement;
  readonly credentialEgress?: { readonly requirement: CredentialEgressRequirement };
  readonly driver: HarnessDriverDeclaration;
}

/** The concrete strategies chosen for one work item. */
export interface ManagedRuntimePlan {
  readonly workspaceStrategy: WorkspaceStrategy;
  /** Null when outputs are disabled. */
  readonly outputStrategy: OutputStrategy | null;
  /** Null when no runtime checkpoint is taken. */
  readonly runtimeCheckpoint: RuntimeCheckpointKind | null;
  readonly driver: HarnessDriverType;
}

export const runtimeProcessDeclarationSchema = z.object({
  command: nonEmptyString,
  args: z.array(z.string()).optional(),
  cwd: z.string().startsWith("/", "must be absolute").optional(),
  env: z.record(z.string(), z.string()).optional(),
});

const positiveMs = z.number().int().positive();

export const harnessDriverDeclarationSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ama_worker"), process: runtimeProcessDeclarationSchema }),
  z.object({
    type: z.literal("openma_supervised"),
    protocol: z.literal("openma-harness-supervisor-v1"),
    supervisor: runtimeProcessDeclarationSchema,
    harness: z.object({ id: nonEmptyString, version: nonEmptyString }),
    readyTimeoutMs: positiveMs,
    heartbeatTimeoutMs: positiveMs,
    drainTimeoutMs: positiveMs,
  }),
]);

/** Schema for {@link ManagedRuntimeProfile}. */
export const managedRuntimeProfileSchema = z.object({
  workspace: z.object({
    requirement: z.enum(["durable", "continuable", "ephemeral"]),
    preferredStrategies: z.array(workspaceStrategySchema).optional(),
  }),
  outputs: z.object({
    requirement: z.enum(["durable", "best_effort", "disabled"]),
    preferredStrategies: z.array(outputStrategySchema).optional(),
  }),
  runtimeCheckpoint: z.enum(["required", "optional", "disabled"]),
  credentialEgress: z
    .object({ requirement: z.enum(["required", "best_effort", "disabled"]) })
    .optional(),
  driver: harnessDriverDeclarationSchema,
});

/** Schema for {@link ManagedRuntimePlan}. */
export const managedRuntimePlanSchema = z.object({
  workspaceStrategy: workspaceStrategySchema,
  outputStrategy: outputStrategySchema.nullable(),
  runtimeCheckpoint: runtimeCheckpointKindSchema.nullable(),
  driver: z.enum(["ama_worker", "openma_supervised"]),
});
