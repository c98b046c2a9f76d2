import type {
  HarnessDriverType,
  HarnessRunInput,
  ManagedWorkExecutionResult,
  SandboxHarnessDriverPort,
} from "@open-managed-agents/runtime-resource-contract";
import { type Scheduler, systemScheduler } from "../time.js";

/** Options of {@link createScriptedHarnessDriver}. */
export interface ScriptedHarnessOptions {
  /** Lanes the driver reports. @default ["ama_worker", "openma_supervised"] */
  readonly lanes?: readonly HarnessDriverType[];
  /** Live checkpoints requested, in order, before the run waits; a rejected request fails the run. */
  readonly checkpoints?: readonly string[];
  /** Time the harness "works" after its checkpoints, on `scheduler`; abort ends it as `aborted`. @default 0 */
  readonly durationMs?: number;
  readonly scheduler?: Scheduler;
  /** Replaces the default behaviour entirely. */
  readonly script?: (input: HarnessRunInput) => Promise<ManagedWorkExecutionResult>;
}

/** A harness driver that follows a script instead of running a process. */
export function createScriptedHarnessDriver(
  options: ScriptedHarnessOptions = {},
): SandboxHarnessDriverPort {
  const lanes = options.lanes ?? ["ama_worker", "openma_supervised"];
  const scheduler = options.scheduler ?? systemScheduler;
  const script =
    options.script ??
    (async (input: HarnessRunInput): Promise<ManagedWorkExecutionResult> => {
      for (const checkpointId of options.checkpoints ?? []) {
        if (!input.checkpoint) throw new Error("live checkpoints are not enabled");
        await input.checkpoint({ checkpointId, sessionId: input.scope.sessionId });
      }
      if ((options.durationMs ?? 0) > 0) {
        try {
          await scheduler.sleep(options.durationMs ?? 0, input.signal);
        } catch {
          return { type: "aborted" };
        }
      }
      return { type: "completed" };
    });
  return { driverCapabilities: async () => ({ drivers: [...lanes] }), run: script };
}
