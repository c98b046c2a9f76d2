import * as z from "zod";
import type { EnvironmentSetupResult } from "./environment-packages.js";
import { nonEmptyString } from "./json.js";
import type { RuntimeProcessDeclaration } from "./profile.js";
import type { ManagedSandboxLease } from "./sandbox.js";
import { type RuntimeResourceScope, runtimeResourceScopeSchema } from "./scope.js";

/** Protocol id of the supervisor wire. */
export const SUPERVISOR_PROTOCOL = "openma-harness-supervisor-v1";

/** Host → supervisor, one JSON object per line on stdin. The fence token is never sent. */
export type HarnessSupervisorCommand =
  | {
      readonly type: "start";
      readonly scope: RuntimeResourceScope;
      readonly harness: { readonly id: string; readonly version: string };
      readonly workspacePath: string;
      readonly outputPath: string | null;
    }
  | { readonly type: "drain" }
  | { readonly type: "checkpoint.commit"; readonly checkpointId: string }
  | { readonly type: "checkpoint.reject"; readonly checkpointId: string; readonly message: string }
  | { readonly type: "stop"; readonly reason: "aborted" | "failed" };

/** Supervisor → host, one JSON object per line on stdout. */
export type HarnessSupervisorEvent =
  | { readonly type: "ready"; readonly protocol: typeof SUPERVISOR_PROTOCOL }
  | { readonly type: "heartbeat"; readonly sequence: number }
  | {
      readonly type: "checkpoint";
      readonly checkpointId: string;
      readonly sessionId: string;
      readonly turnId?: string;
    }
  | { readonly type: "completed"; readonly exitCode: number }
  | { readonly type: "drained" }
  | { readonly type: "error"; readonly message: string };

/** A bidirectional supervisor conversation. */
export interface HarnessSupervisorChannel {
  /** Writes one command line. Throws when the channel is closed. */
  send(command: HarnessSupervisorCommand): Promise<void>;
  /** The event stream; consumable once. Malformed lines fail the iteration with `upstream_protocol`. */
  events(signal: AbortSignal): AsyncIterable<HarnessSupervisorEvent>;
  /** Ends the conversation and the supervisor process. Idempotent. */
  close(): Promise<void>;
}

/** Opens supervisor channels over whatever stdio the driver has (a duplex process, a socket). */
export interface HarnessSupervisorTransportPort {
  /** Starts the supervisor process in the sandbox and returns its channel. */
  open(input: {
    readonly scope: RuntimeResourceScope;
    readonly sandbox: ManagedSandboxLease;
    readonly process: RuntimeProcessDeclaration;
    /** The run's environment setup; its tool directories go in front of the process's `PATH`. */
    readonly environmentSetup?: EnvironmentSetupResult;
    readonly signal: AbortSignal;
  }): Promise<HarnessSupervisorChannel>;
}

/** Schema for {@link HarnessSupervisorCommand}. */
export const harnessSupervisorCommandSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("start"),
    scope: runtimeResourceScopeSchema,
    harness: z.object({ id: nonEmptyString, version: nonEmptyString }),
    workspacePath: nonEmptyString,
    outputPath: z.string().nullable(),
  }),
  z.object({ type: z.literal("drain") }),
  z.object({ type: z.literal("checkpoint.commit"), checkpointId: nonEmptyString }),
  z.object({
    type: z.literal("checkpoint.reject"),
    checkpointId: nonEmptyString,
    message: z.string(),
  }),
  z.object({ type: z.literal("stop"), reason: z.enum(["aborted", "failed"]) }),
]);

/** Schema for {@link HarnessSupervisorEvent}. */
export const harnessSupervisorEventSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ready"), protocol: z.literal(SUPERVISOR_PROTOCOL) }),
  z.object({ type: z.literal("heartbeat"), sequence: z.number().int().nonnegative() }),
  z.object({
    type: z.literal("checkpoint"),
    checkpointId: nonEmptyString,
    sessionId: nonEmptyString,
    turnId: z.string().optional(),
  }),
  z.object({ type: z.literal("completed"), exitCode: z.number().int() }),
  z.object({ type: z.literal("drained") }),
  z.object({ type: z.literal("error"), message: z.string() }),
]);
