import {
  type CredentialEgressBinding,
  type CredentialEgressRequirement,
  type EnvironmentPackages,
  InternalError,
  LeaseLostError,
  type ManagedRuntimeError,
  type ManagedRuntimePlan,
  type ManagedRuntimeProfile,
  type ManagedSandboxLease,
  type RuntimeCheckpointRef,
  type RuntimeMemoryStore,
  type RuntimeResourceFence,
  type RuntimeResourcePublication,
  type RuntimeResourceScope,
  type RuntimeSessionSnapshot,
  type SessionInputAccessPort,
  type SessionOutputBinding,
  type SessionOutputManifestCandidate,
  type WorkspaceBinding,
  type WorkspaceCheckpointCandidate,
} from "@open-managed-agents/runtime-resource-contract";
import { markHostError, redactedMessage } from "../errors.js";
import { type HostLogger, createRedactingLogger } from "../logger.js";
import type { ResolvedHostOptions } from "./host-options.js";
import type { ManagedRuntimeRunInput, ManagedRuntimeRunPublication } from "./types.js";

/** What admission decided before the fence was taken. */
export interface Admission {
  readonly plan: ManagedRuntimePlan;
  readonly egressRequirement: CredentialEgressRequirement;
  /** Harness identity a runtime checkpoint must match to be reused. */
  readonly harnessVersion: string;
  readonly runtimeIdentity: string;
}

/** Why a lease was lost; becomes `context.trigger` of the {@link LeaseLostError}. */
export type LeaseLossTrigger =
  | "caller_aborted"
  | "fence_lost"
  | "fence_renew_failed"
  | "fence_expired"
  | "fence_not_current"
  | "fence_rotation_failed"
  | "publish_refused"
  | "sandbox_lost"
  | "sandbox_heartbeat_failed"
  | "harness_aborted"
  | "scheduler_failed";

/** How the transaction ended, before cleanup. */
export type RunOutcome =
  | { readonly type: "lease_lost"; readonly error: LeaseLostError }
  | { readonly type: "failed"; readonly error: ManagedRuntimeError };

/** Mutable state of one run, shared by the transaction and cleanup steps. */
export interface RunContext {
  readonly options: ResolvedHostOptions;
  readonly scope: RuntimeResourceScope;
  readonly profile: ManagedRuntimeProfile;
  readonly session: RuntimeSessionSnapshot | undefined;
  readonly sessionInputAccess: SessionInputAccessPort | undefined;
  readonly environmentPackages: EnvironmentPackages | undefined;
  readonly sandboxImageAlias: string | undefined;
  /** Memory stores of the run; empty when it carries none. */
  readonly memoryStores: readonly RuntimeMemoryStore[];
  /** The caller's last step before the harness starts; see {@link ManagedRuntimeRunInput.beforeHarness}. */
  readonly beforeHarness: ManagedRuntimeRunInput["beforeHarness"];
  /** Redacts every known fence token from every field. */
  readonly log: HostLogger;
  /** Aborted on lease loss, caller abort or failure; passed to every transaction port call. */
  readonly signal: AbortSignal;
  /** Aborted with `signal` or when cleanup starts; stops the monitor and the sync loop. */
  readonly backgroundSignal: AbortSignal;
  /** Stages whose port call is pending. */
  readonly inFlight: Set<string>;
  readonly cleanupErrors: ManagedRuntimeError[];
  /** Generations this run called publish with (successful or not). */
  readonly publishedGenerations: Set<number>;
  /** Loops (monitor, session-input sync) cleanup waits for. */
  readonly background: Promise<void>[];
  admission: Admission | null;
  fence: RuntimeResourceFence | null;
  /** The session publication found when the fence was acquired. */
  publication: RuntimeResourcePublication | null;
  workspaceBinding: WorkspaceBinding | null;
  outputBinding: SessionOutputBinding | null;
  /** The egress binding and the fence it was prepared under; revoke and release use that fence. */
  egress: {
    readonly binding: CredentialEgressBinding;
    readonly fence: RuntimeResourceFence;
  } | null;
  lease: ManagedSandboxLease | null;
  /** Leases journaled for this run (the driver's lease-to-be and any runtime a failed restore started). */
  readonly journaled: { readonly id: string; readonly sandbox: ManagedSandboxLease }[];
  /** Terminate of `lease` was confirmed; its journal record may go. */
  terminated: boolean;
  /** An acquire or restore the run stopped waiting for; cleanup settles it. */
  pendingLease: Promise<ManagedSandboxLease> | null;
  /** The runtime was suspended for retention; heartbeats stop. */
  suspended: boolean;
  retained: boolean;
  workspaceCandidate: WorkspaceCheckpointCandidate | null;
  outputCandidate: SessionOutputManifestCandidate | null;
  runtimeCheckpointRef: RuntimeCheckpointRef | null;
  sessionInputsMaterialized: boolean;
  /** Some publish under this run's fence succeeded (a live checkpoint or the final one). */
  anyPublished: boolean;
  /** A publish call did not return a definite answer. */
  publishUncertain: boolean;
  finalPublish: {
    readonly revision: number;
    readonly generation: number;
    readonly published: ManagedRuntimeRunPublication;
  } | null;
  outcome: RunOutcome | null;
  secrets(): readonly string[];
  /** Installs a (renewed or rotated) fence and remembers its token for redaction. */
  setFence(fence: RuntimeResourceFence): void;
  requireFence(): RuntimeResourceFence;
  requireAdmission(): Admission;
  loseLease(
    trigger: LeaseLossTrigger,
    detail?: { readonly stage?: string; readonly cause?: unknown },
  ): LeaseLostError;
  fail(error: ManagedRuntimeError): void;
  stopBackground(): void;
  dispose(): void;
}

/** Why background loops stop when cleanup starts; shared, so stopping allocates nothing. */
const BACKGROUND_STOPPED: Error = new Error("run finished");

/** Creates the state of one run and wires the caller's signal to lease loss. */
export function createRunContext(
  options: ResolvedHostOptions,
  input: ManagedRuntimeRunInput,
): RunContext {
  const controller = new AbortController();
  const background = new AbortController();
  controller.signal.addEventListener("abort", () => background.abort(controller.signal.reason), {
    once: true,
  });
  const tokens: string[] = [];
  const secrets = () => tokens;
  const inFlight = new Set<string>();

  const run: RunContext = {
    options,
    scope: input.scope,
    profile: input.profile,
    session: input.session,
    sessionInputAccess: input.sessionInputAccess,
    environmentPackages: input.environmentPackages,
    sandboxImageAlias: input.sandboxImageAlias,
    memoryStores: input.memoryStores ?? [],
    beforeHarness: input.beforeHarness,
    log: createRedactingLogger(options.logger, secrets),
    signal: controller.signal,
    backgroundSignal: background.signal,
    inFlight,
    cleanupErrors: [],
    publishedGenerations: new Set(),
    background: [],
    admission: null,
    fence: null,
    publication: null,
    workspaceBinding: null,
    outputBinding: null,
    egress: null,
    lease: null,
    journaled: [],
    terminated: false,
    pendingLease: null,
    suspended: false,
    retained: false,
    workspaceCandidate: null,
    outputCandidate: null,
    runtimeCheckpointRef: null,
    sessionInputsMaterialized: false,
    anyPublished: false,
    publishUncertain: false,
    finalPublish: null,
    outcome: null,
    secrets,
    setFence(fence) {
      if (!tokens.includes(fence.token)) tokens.push(fence.token);
      run.fence = fence;
    },
    requireFence() {
      if (!run.fence)
        throw markHostError(new InternalError({ message: "no fence is held at this stage" }));
      return run.fence;
    },
    requireAdmission() {
      if (!run.admission)
        throw markHostError(new InternalError({ message: "the run has not been admitted" }));
      return run.admission;
    },
    loseLease(trigger, detail = {}) {
      if (run.outcome?.type === "lease_lost") return run.outcome.error;
      const pending = [...inFlight];
      const stage = detail.stage ?? pending[0] ?? "idle";
      const because =
        detail.cause === undefined ? "" : `: ${redactedMessage(detail.cause, tokens)}`;
      const error = markHostError(
        new LeaseLostError({
          message: `lease lost (${trigger}) during ${stage}${because}`,
          context: {
            trigger,
            stage,
            inFlight: pending,
            ...(run.fence ? { generation: run.fence.generation } : {}),
          },
          ...(detail.cause === undefined
            ? {}
            : { cause: new Error(redactedMessage(detail.cause, tokens)) }),
        }),
      );
      if (!run.outcome) {
        run.outcome = { type: "lease_lost", error };
        run.log.warn("lease.lost", {
          trigger,
          stage,
          inFlight: pending,
          generation: run.fence?.generation,
        });
        controller.abort(error);
      }
      return error;
    },
    fail(error) {
      if (run.outcome) return;
      run.outcome = { type: "failed", error };
      controller.abort(error);
    },
    stopBackground() {
      background.abort(BACKGROUND_STOPPED);
    },
    dispose() {
      input.signal?.removeEventListener("abort", onCallerAbort);
    },
  };

  const onCallerAbort = () => void run.loseLease("caller_aborted");
  if (input.signal?.aborted) onCallerAbort();
  else input.signal?.addEventListener("abort", onCallerAbort, { once: true });
  return run;
}
