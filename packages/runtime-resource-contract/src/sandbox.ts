import * as z from "zod";
import { type ScalarMetadata, nonEmptyString, scalarMetadataSchema } from "./json.js";
import type { SandboxResourceCapabilities } from "./capabilities.js";
import type { CredentialEgressBinding } from "./credential-egress.js";
import type { RuntimeResourceFence } from "./fence.js";
import type { SessionOutputBinding } from "./outputs.js";
import type { ManagedRuntimePlan } from "./profile.js";
import type { Abortable, RuntimeResourceScope, TerminationReason } from "./scope.js";
import type { SandboxJournalBinding } from "./sandbox-journal.js";
import type { WorkspaceBinding } from "./workspace.js";

/**
 * The serializable handle of acquired compute. It is stored in orphan records and reaped later by a
 * different process, so it holds only JSON scalars: no SDK handle, token, API key or egress binding id.
 */
export interface ManagedSandboxLease {
  /** Provider id; equals the driver descriptor's `provider`. */
  readonly provider: string;
  /** Provider-scoped runtime id, enough to reap the runtime without a fence token. */
  readonly runtimeId: string;
  readonly metadata?: ScalarMetadata;
}

/** Result of a heartbeat: `lost` when the provider no longer runs the sandbox. */
export type SandboxHeartbeatResult =
  | { readonly type: "alive" }
  | { readonly type: "lost"; readonly reason?: string };

/** What the provider reports about a runtime, without waking it. */
export interface SandboxObservation {
  readonly state: "running" | "suspended" | "stopped" | "unknown";
}

/** Input of {@link ManagedSandboxPort.acquire}. */
export interface SandboxAcquireInput extends Abortable {
  readonly scope: RuntimeResourceScope;
  readonly fence: RuntimeResourceFence;
  readonly plan: ManagedRuntimePlan;
  readonly workspace: WorkspaceBinding;
  readonly outputs: SessionOutputBinding | null;
  /** Opaque egress binding. Its id must not be written into the lease, a checkpoint or a log. */
  readonly credentialEgress: CredentialEgressBinding | null;
  /**
   * Write-ahead journal of the sandbox this acquire starts. The host always passes one; a driver calls
   * `journal.record(lease)` once it knows the runtime id and before the provider starts compute for it.
   */
  readonly journal?: SandboxJournalBinding;
}

/**
 * Compute for one work item. All methods are required; a driver that cannot suspend throws
 * `unsupported_operation` from `suspend` and advertises `suspendResume: "unsupported"`.
 */
export interface ManagedSandboxPort {
  /** What this port can do. Read by plan resolution and registry admission. */
  capabilities(scope: RuntimeResourceScope): Promise<SandboxResourceCapabilities>;
  /**
   * Starts (or reconnects to) compute and returns its lease. Must not return before the runtime
   * environment readiness probe passed. Throws `insufficient_capacity`, `sandbox_failed`,
   * `readiness_failed` or `aborted`.
   */
  acquire(input: SandboxAcquireInput): Promise<ManagedSandboxLease>;
  /** Renews the provider-side lease. `lost` when the provider deleted or stopped the runtime. */
  heartbeat(input: {
    readonly scope: RuntimeResourceScope;
    readonly fence: RuntimeResourceFence;
    readonly lease: ManagedSandboxLease;
  }): Promise<SandboxHeartbeatResult>;
  /**
   * Retains the runtime for `retained_runtime` and returns the lease a later acquire reconnects to.
   * Called after a successful harness run, before the workspace checkpoint. Throws `unsupported_operation`
   * unless `suspendResume` is `supported`.
   */
  suspend(input: {
    readonly scope: RuntimeResourceScope;
    readonly fence: RuntimeResourceFence;
    readonly lease: ManagedSandboxLease;
    readonly signal: AbortSignal;
  }): Promise<ManagedSandboxLease>;
  /** Stops compute while the fence is held. Idempotent for every reason; a gone runtime is success. */
  terminate(input: {
    readonly scope: RuntimeResourceScope;
    readonly fence: RuntimeResourceFence;
    readonly lease: ManagedSandboxLease;
    readonly reason: TerminationReason;
  }): Promise<void>;
  /**
   * Stops compute from a serialized lease, with no fence token (orphan reconciliation). Safe to repeat;
   * a gone runtime is success. Throws `provider_mismatch` for a foreign lease.
   */
  reap(input: {
    readonly scope: RuntimeResourceScope;
    readonly lease: ManagedSandboxLease;
    readonly reason: TerminationReason;
  }): Promise<void>;
  /** Observes the runtime without waking it; `unknown` when the provider cannot tell cheaply. */
  inspect(lease: ManagedSandboxLease): Promise<SandboxObservation>;
}

/** Schema for {@link ManagedSandboxLease}; rejects nested metadata. */
export const managedSandboxLeaseSchema = z.object({
  provider: nonEmptyString,
  runtimeId: nonEmptyString,
  metadata: scalarMetadataSchema.optional(),
});
