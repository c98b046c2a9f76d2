import {
  CapabilityUnsupportedError,
  type HarnessRunInput,
  type HarnessSupervisorChannel,
  type HarnessSupervisorEvent,
  type HarnessSupervisorTransportPort,
  type ManagedWorkExecutionResult,
  type OpenmaSupervisedDriverDeclaration,
  SandboxFailedError,
  type SandboxHarnessDriverPort,
  TimeoutError,
  UpstreamProtocolError,
  parseHarnessSupervisorEvent,
  parseRecord,
} from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import { raceAbort } from "../abort.js";
import { portSchema } from "../host/host-options.js";
import { type Clock, type Scheduler, systemClock, systemScheduler } from "../time.js";
import { type EventReader, createEventReader } from "./event-reader.js";

/** Options of {@link createSupervisedSandboxHarnessDriver}. */
export interface SupervisedSandboxHarnessDriverOptions {
  /** Opens the supervisor process and its NDJSON channel inside the sandbox. */
  readonly transport: HarnessSupervisorTransportPort;
  /** Measures the gap between heartbeats. @default systemClock */
  readonly clock?: Clock;
  /** Drives the ready, heartbeat and drain timeouts. @default systemScheduler */
  readonly scheduler?: Scheduler;
}

/** Longest `checkpoint.reject` message sent to the supervisor. */
const MAX_REJECT_MESSAGE = 1000;

const optionsSchema = z.object({
  transport: portSchema(["open"]),
  clock: portSchema(["now"]).optional(),
  scheduler: portSchema(["sleep"]).optional(),
});

/**
 * Runs the `openma_supervised` lane over `openma-harness-supervisor-v1`: opens the supervisor, sends
 * `start`, requires `ready` within `readyTimeoutMs`, then a `heartbeat` at least every
 * `heartbeatTimeoutMs`. `checkpoint` events go to the host's live-checkpoint callback and are answered
 * with `checkpoint.commit` or `checkpoint.reject`. `completed` with exit code 0 completes the run. On
 * abort it sends `drain`, waits up to `drainTimeoutMs` for `drained`, sends `stop` and returns `aborted`.
 * The supervisor never receives the fence token.
 */
export function createSupervisedSandboxHarnessDriver(options: SupervisedSandboxHarnessDriverOptions): SandboxHarnessDriverPort {
  parseRecord(optionsSchema, options, { record: "supervised harness driver options", code: "invalid_config" });
  const clock = options.clock ?? systemClock;
  const scheduler = options.scheduler ?? systemScheduler;

  return {
    async driverCapabilities() {
      return { drivers: ["openma_supervised" as const] };
    },

    async run(input: HarnessRunInput): Promise<ManagedWorkExecutionResult> {
      const driver = input.driver;
      if (driver.type !== "openma_supervised") {
        throw new CapabilityUnsupportedError({
          message: `the supervised harness driver cannot run the ${driver.type} lane`,
          context: { requirement: "harness_driver", driver: driver.type },
        });
      }
      if (input.signal.aborted) return { type: "aborted" };
      const lifetime = new AbortController();
      let channel: HarnessSupervisorChannel;
      try {
        channel = await raceAbort(
          options.transport.open({ scope: input.scope, sandbox: input.sandbox, process: driver.supervisor, signal: lifetime.signal }),
          input.signal,
        );
      } catch (error) {
        lifetime.abort();
        if (input.signal.aborted) return { type: "aborted" };
        throw error;
      }
      const reader = createEventReader(channel.events(lifetime.signal), scheduler);
      try {
        return await converse(input, driver, channel, reader);
      } catch (error) {
        if (input.signal.aborted) {
          await drain(channel, reader, driver);
          return { type: "aborted" };
        }
        await channel.send({ type: "stop", reason: "failed" }).catch(() => undefined);
        throw error;
      } finally {
        lifetime.abort();
        await channel.close().catch(() => undefined);
      }
    },
  };

  async function converse(
    input: HarnessRunInput,
    driver: OpenmaSupervisedDriverDeclaration,
    channel: HarnessSupervisorChannel,
    reader: EventReader,
  ): Promise<ManagedWorkExecutionResult> {
    await channel.send({ type: "start", scope: input.scope, harness: driver.harness, workspacePath: input.workspacePath, outputPath: input.outputPath });
    const first = await reader.next(driver.readyTimeoutMs, input.signal);
    if (first === "timeout") throw timeout("ready", driver.readyTimeoutMs);
    const ready = expectEvent(first);
    if (ready.type === "error") throw failed(ready.message);
    if (ready.type !== "ready") throw protocol(`expected ready, received ${ready.type}`);

    let lastBeat = clock.now();
    let lastSequence = -1;
    let checkpoints: Promise<void> = Promise.resolve();
    for (;;) {
      const remaining = driver.heartbeatTimeoutMs - (clock.now() - lastBeat);
      if (remaining <= 0) throw timeout("heartbeat", driver.heartbeatTimeoutMs);
      const next = await reader.next(remaining, input.signal);
      if (next === "timeout") continue;
      const event = expectEvent(next);
      switch (event.type) {
        case "heartbeat":
          if (event.sequence <= lastSequence) throw protocol(`heartbeat sequence ${event.sequence} does not increase`);
          lastSequence = event.sequence;
          lastBeat = clock.now();
          break;
        case "checkpoint":
          // Commits run one after another while heartbeats keep being read.
          checkpoints = checkpoints.then(() => answerCheckpoint(input, channel, event));
          break;
        case "completed":
          await checkpoints;
          if (event.exitCode !== 0) throw failed(`supervised harness exited with code ${event.exitCode}`);
          return { type: "completed" };
        case "error":
          throw failed(event.message);
        default:
          throw protocol(`unexpected ${event.type} event`);
      }
    }
  }

  async function drain(channel: HarnessSupervisorChannel, reader: EventReader, driver: OpenmaSupervisedDriverDeclaration): Promise<void> {
    try {
      await channel.send({ type: "drain" });
      const deadline = clock.now() + driver.drainTimeoutMs;
      for (let remaining = driver.drainTimeoutMs; remaining > 0; remaining = deadline - clock.now()) {
        const next = await reader.next(remaining);
        if (next === "timeout" || next === "end" || next.type === "drained") break;
        if (next.type === "checkpoint") {
          await channel.send({ type: "checkpoint.reject", checkpointId: next.checkpointId, message: "the run is draining" });
        }
      }
    } catch {
      // A broken channel while draining still gets the stop below.
    }
    await channel.send({ type: "stop", reason: "aborted" }).catch(() => undefined);
  }
}

async function answerCheckpoint(
  input: HarnessRunInput,
  channel: HarnessSupervisorChannel,
  event: Extract<HarnessSupervisorEvent, { type: "checkpoint" }>,
): Promise<void> {
  const { checkpointId } = event;
  try {
    if (!input.checkpoint) throw new Error("live checkpoints are not enabled for this run");
    await input.checkpoint({ checkpointId, sessionId: event.sessionId, ...(event.turnId === undefined ? {} : { turnId: event.turnId }) });
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).slice(0, MAX_REJECT_MESSAGE);
    await channel.send({ type: "checkpoint.reject", checkpointId, message }).catch(() => undefined);
    return;
  }
  await channel.send({ type: "checkpoint.commit", checkpointId }).catch(() => undefined);
}

function expectEvent(next: HarnessSupervisorEvent | "end"): HarnessSupervisorEvent {
  if (next === "end") throw protocol("the supervisor event stream ended before completed");
  return parseHarnessSupervisorEvent(next, { code: "upstream_protocol" });
}

function timeout(what: "ready" | "heartbeat", ms: number): TimeoutError {
  return new TimeoutError({ message: `supervisor sent no ${what} within ${ms} ms`, context: { stage: `supervisor-${what}`, timeoutMs: ms } });
}

function failed(message: string): SandboxFailedError {
  return new SandboxFailedError({ message: `supervised harness failed: ${message}`, context: { stage: "supervisor" } });
}

function protocol(message: string): UpstreamProtocolError {
  return new UpstreamProtocolError({ message: `supervisor protocol violation: ${message}`, context: { stage: "supervisor" } });
}

