import type { SandboxHarnessDriverCapabilities } from "./capabilities.js";
import type { RuntimeResourceFence } from "./fence.js";
import type { OUTPUTS_MOUNT_PATH } from "./outputs.js";
import type { EnvironmentSetupResult } from "./environment-packages.js";
import type { HarnessDriverDeclaration } from "./profile.js";
import type { ManagedSandboxLease } from "./sandbox.js";
import type { Abortable, RuntimeResourceScope } from "./scope.js";
import type { WORKSPACE_MOUNT_PATH } from "./workspace.js";

/** How a harness run ended. `aborted` means the signal fired; the host reports it as `lease_lost`. */
export type ManagedWorkExecutionResult =
  | { readonly type: "completed" }
  | { readonly type: "aborted" };

/** A live turn boundary the harness asks the host to commit. */
export interface HarnessCheckpointRequest {
  /** Unique per run; duplicates and empty ids are refused. */
  readonly checkpointId: string;
  /** Must equal the scope's session id. */
  readonly sessionId: string;
  readonly turnId?: string;
}

/** Input of {@link SandboxHarnessDriverPort.run}. */
export interface HarnessRunInput extends Abortable {
  readonly scope: RuntimeResourceScope;
  readonly fence: RuntimeResourceFence;
  readonly sandbox: ManagedSandboxLease;
  readonly workspacePath: typeof WORKSPACE_MOUNT_PATH;
  readonly outputPath: typeof OUTPUTS_MOUNT_PATH | null;
  readonly driver: HarnessDriverDeclaration;
  /**
   * Environment setup of this run, when the environment listed packages: the harness process gets its
   * `pathEntries` in front of `PATH`.
   */
  readonly environmentSetup?: EnvironmentSetupResult;
  /**
   * Commits a live checkpoint: the host checkpoints the workspace, collects and finalizes outputs and
   * publishes under the fence. Rejects when the request is invalid or the fence was lost.
   */
  readonly checkpoint?: (request: HarnessCheckpointRequest) => Promise<void>;
}

/** Runs the harness inside an acquired sandbox. */
export interface SandboxHarnessDriverPort {
  /** Harness lanes this port can run. */
  driverCapabilities(scope: RuntimeResourceScope): Promise<SandboxHarnessDriverCapabilities>;
  /**
   * Runs the declared harness to completion. Returns `aborted` when the signal fires; throws
   * `sandbox_failed` when the harness exits non-zero, `capability_unsupported` for a lane it cannot run.
   */
  run(input: HarnessRunInput): Promise<ManagedWorkExecutionResult>;
  /**
   * Ends the harness processes of a run whose host is gone (the in-sandbox worker and everything it
   * started), from a serialized lease with no fence token, and keeps the runtime and its files. The
   * reconciler calls it before it salvages that sandbox's workspace, so nothing writes while the tree is
   * captured. Throws `not_found` when the runtime is gone. Optional: without it, such sandboxes are only reaped.
   */
  endAbandoned?(input: {
    readonly scope: RuntimeResourceScope;
    readonly sandbox: ManagedSandboxLease;
    readonly signal?: AbortSignal;
  }): Promise<void>;
}
