import type {
  CredentialEgressPort,
  EnvironmentPackages,
  EnvironmentPackagesPort,
  LeaseLostError,
  ManagedRuntimeError,
  ManagedRuntimeProfile,
  ManagedSandboxPort,
  MemoryStoresPort,
  RuntimeCheckpointPort,
  RuntimeMemoryStore,
  RuntimeOrphanPort,
  RuntimeResourceFencePort,
  RuntimeResourceScope,
  RuntimeSessionSnapshot,
  SandboxJournalPort,
  SandboxHarnessDriverPort,
  SessionInputAccessPort,
  SessionInputMaterializerPort,
  SessionOutputPort,
  WorkspacePersistencePort,
} from "@open-managed-agents/runtime-resource-contract";
import type { HostLogger } from "../logger.js";
import type { Clock, Scheduler } from "../time.js";

/** Dependencies of {@link createManagedRuntimeHost}. Validated once, at creation. */
export interface ManagedRuntimeHostOptions {
  /** This host instance; written into fences and orphan records. */
  readonly ownerId: string;
  /** Fence time-to-live requested on acquire and every renewal. */
  readonly leaseTtlMs: number;
  /** Period of fence renewal and sandbox heartbeat; must be shorter than `leaseTtlMs`. Each call must answer within it. */
  readonly heartbeatIntervalMs: number;
  /**
   * Longest wait for a transaction call whose port method takes no signal: capability queries, fence
   * acquire and publish, runtime-checkpoint create. Calls that take a signal end with the lease or the caller. @default 30000
   */
  readonly callTimeoutMs?: number;
  /** Longest wait for one cleanup call (revoke, terminate, release, orphan enqueue). @default 30000 */
  readonly cleanupTimeoutMs?: number;
  /** Period of session-input synchronisation while the materializer owns a writable memory store. @default 15000 */
  readonly sessionInputSyncIntervalMs?: number;
  readonly fences: RuntimeResourceFencePort;
  readonly orphans: RuntimeOrphanPort;
  /**
   * Write-ahead journal of sandboxes. With it, every sandbox a driver starts for a run is recorded before
   * the provider's create call and the record is removed only once terminate is confirmed (or a retained
   * runtime was published); the reconciler reaps what is left once the generation is no longer current.
   * Use a durable (SQL) journal where the host process may die.
   */
  readonly journal?: SandboxJournalPort;
  readonly sandbox: ManagedSandboxPort;
  readonly workspace: WorkspacePersistencePort;
  readonly outputs: SessionOutputPort;
  readonly harnessDriver: SandboxHarnessDriverPort;
  readonly runtimeCheckpoint?: RuntimeCheckpointPort;
  readonly credentialEgress?: CredentialEgressPort;
  readonly sessionInputs?: SessionInputMaterializerPort;
  /** Installs the environment's packages before the harness; a run that carries packages is refused without it. */
  readonly environmentPackages?: EnvironmentPackagesPort;
  /** Mounts the run's memory stores before the harness and writes them back at checkpoint; a run that carries stores is refused without it. */
  readonly memoryStores?: MemoryStoresPort;
  /** @default systemClock */
  readonly clock?: Clock;
  /** Drives renewal, heartbeat, sync and cleanup deadlines. @default systemScheduler */
  readonly scheduler?: Scheduler;
  /** Receives structured events; never a token. @default silentLogger */
  readonly logger?: HostLogger;
}

/** One work item for {@link ManagedRuntimeHost.run}. */
export interface ManagedRuntimeRunInput {
  readonly scope: RuntimeResourceScope;
  readonly profile: ManagedRuntimeProfile;
  /** The session; its resources are materialized by the session-input port. */
  readonly session?: RuntimeSessionSnapshot;
  /** Control-plane access handed to the session-input materializer. */
  readonly sessionInputAccess?: SessionInputAccessPort;
  /** `Environment.config.packages` of the session's environment; installed after attach, before the harness. */
  readonly environmentPackages?: EnvironmentPackages;
  /** The catalog sandbox image alias the environment selected; part of the setup markers. */
  readonly sandboxImageAlias?: string;
  /**
   * Memory stores to put at `/mnt/memory/<storeName>/` (`memoryStoresOfSession(session)` derives them from
   * the session's `memory_store` resources). A `file_sync` port reads and writes them through `sessionInputAccess.memories`.
   */
  readonly memoryStores?: readonly RuntimeMemoryStore[];
  /**
   * Called once the sandbox is prepared (workspace restored and verified, packages and inputs in place), right
   * before the harness starts, and never when the run ends earlier. The variables it returns are added to the
   * harness process's environment as they are (never a credential). A rejection fails the run at
   * `harness-run` with no harness started.
   */
  readonly beforeHarness?: (
    signal: AbortSignal,
  ) => Promise<Readonly<Record<string, string>> | undefined>;
  /** Aborting it ends the run as `lease_lost` and aborts every in-flight port call. */
  readonly signal?: AbortSignal;
}

/**
 * What a completed run published, as the session's active state now names it. Ids and digests only:
 * candidate metadata (provider details) and fences stay out.
 */
export interface ManagedRuntimeRunPublication {
  /** The workspace checkpoint handle the next work item restores from. */
  readonly workspaceCheckpoint: { readonly id: string; readonly contentHash: string };
  /** The Session output manifest, or null when the run had no outputs. `entries` counts its files. */
  readonly outputManifest: {
    readonly id: string;
    readonly contentHash: string;
    readonly entries: number;
  } | null;
}

/**
 * How a run ended. Cleanup never changes the type: its failures are listed in `cleanupErrors`, each
 * with `context.stage` naming the cleanup call.
 */
export type ManagedRuntimeRunResult =
  | {
      readonly type: "completed";
      /** Revision of the session publication this run wrote. */
      readonly revision: number;
      /** Fence generation that published. */
      readonly generation: number;
      /** What the final publish activated. */
      readonly published: ManagedRuntimeRunPublication;
      readonly cleanupErrors: readonly ManagedRuntimeError[];
    }
  | { readonly type: "conflict"; readonly expiresAt: string | null }
  | {
      readonly type: "lease_lost";
      /** Names the trigger (`context.trigger`) and the stages in flight (`context.inFlight`). */
      readonly error: LeaseLostError;
      readonly cleanupErrors: readonly ManagedRuntimeError[];
    }
  | {
      readonly type: "failed";
      /** `context.stage` names the failing stage. */
      readonly error: ManagedRuntimeError;
      readonly cleanupErrors: readonly ManagedRuntimeError[];
    };

/** The fenced managed-runtime transaction. */
export interface ManagedRuntimeHost {
  /**
   * Runs one work item end to end. Resolves with a result for every port failure, lost lease and
   * admission refusal; rejects only when `input` itself is malformed (`invalid_request`).
   */
  run(input: ManagedRuntimeRunInput): Promise<ManagedRuntimeRunResult>;
}
