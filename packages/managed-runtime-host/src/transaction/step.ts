import type { RunContext } from "../host/run-context.js";

/** One stage of the transaction or of cleanup. */
export interface RunStep {
  /** Stage name; also the idempotency-key suffix and `context.stage` of its errors. */
  readonly stage: string;
  /** Whether the step runs for this run (plan, profile and ports decide). */
  applies(run: RunContext): boolean;
  run(run: RunContext): Promise<void>;
}
