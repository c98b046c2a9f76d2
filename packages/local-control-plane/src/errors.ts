import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import type * as z from "zod";
import type { leaseStateSchema } from "./wire/work-schemas.js";

/** The lease as the server holds it, as a 412 reports it. */
export type LeaseState = z.output<typeof leaseStateSchema>;

/**
 * `lease_lost`: a heartbeat's `expected_last_heartbeat` did not match the stored one, so another worker
 * may hold the lease. Crosses HTTP as 412 with the SDK's `heartbeat_precondition_failed` error shape.
 */
export class HeartbeatPreconditionFailedError extends ManagedRuntimeError {
  /** The lease as the server holds it. */
  readonly currentState: LeaseState;

  constructor(options: {
    readonly message: string;
    readonly workId: string;
    readonly currentState: LeaseState;
  }) {
    super("lease_lost", {
      message: options.message,
      context: { workId: options.workId, state: options.currentState.state },
    });
    this.name = "HeartbeatPreconditionFailedError";
    this.currentState = options.currentState;
  }
}
