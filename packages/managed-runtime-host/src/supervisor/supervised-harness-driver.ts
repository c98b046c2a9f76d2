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
import { positiveSafeIntegerSchema } from "@open-managed-agents/runtime-utils";
import * as z from "zod";
import { raceAbort } from "../abort.js";
import { portSchema } from "../host/host-options.js";
import { type Clock, type Scheduler, systemClock, systemScheduler } from "../time.js";
import { createCheckpointAnswers } from "./checkpoint-answers.js";
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

/** A timeout of the lane declaration: a positive safe integer of milliseconds. */
const timeoutMs = positiveSafeIntegerSchema;
const timeoutsSchema = z.object({
  driver: z.object({
    readyTimeoutMs: timeoutMs,
    heartbeatTimeoutMs: timeoutMs,
    drainTimeoutMs: timeoutMs,
  }),
});

const optionsSchema = z.object({
  transport: portSchema(["open"]),
  clock: portSchema(["now"]).optional(),
  scheduler: portSchema(["sleep"]).optional(),
});

/**
 * Runs the `openma_supervised` lane over `openma-harness-supervisor-v1`. It refuses timeouts that are
 * not positive safe integers (`invalid_request`), opens the supervisor, sends `start`, requires `ready`
 * within `readyTimeoutMs` (heartbeats before it are ignored), then a `heartbeat` at least every
 * `heartbeatTimeoutMs`. `checkpoint` events go to the host's live-checkpoint callback and are answered
 * with `checkpoint.commit`, or `checkpoint.reject` when the host refuses them; a commit that fails
 * fails the run with its error. `completed` with exit code 0 is followed by `drain`: the run completes
 * once `drained` arrives (or `drainTimeoutMs` passes), and an `error` meanwhile fails it. On abort it
 * sends `drain`, waits up to `drainTimeoutMs` for `drained`, sends `stop` and returns `aborted`. Any
 * failure sends `stop{reason:"failed"}`. The supervisor never receives the fence token.
 */
export function createSupervisedSandboxHarnessDriver(
  options: SupervisedSandboxHarnessDriverOptions,
): SandboxHarnessDriverPort {
  parseRecord(optionsSchema, options, {
    record: "supervised harness driver options",
    code: "invalid_config",
  });
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
      // Profile parsing checks these too, but the driver may be used without a host.
      parseRecord(
        timeoutsSchema,
        { driver },
        { record: "supervised lane declaration", code: "invalid_request" },
      );
      if (input.signal.aborted) return { type: "aborted" };
      const lifetime = new AbortController();
      let channel: HarnessSupervisorChannel;
      try {
        channel = await raceAbort(
          options.transport.open({
            scope: input.scope,
            sandbox: input.sandbox,
            process: driver.supervisor,
            ...(input.environmentSetup ? { environmentSetup: input.environmentSetup } : {}),
            signal: lifetime.signal,
          }),
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
    await channel.send({
      type: "start",
      scope: input.scope,
      harness: driver.harness,
      workspacePath: input.workspacePath,
      outputPath: input.outputPath,
    });
    const commits = createCheckpointAnswers(input, channel);
    // A failed commit ends the wait for the next event at once; the commit error is then the run's error.
    const signal = AbortSignal.any([input.signal, commits.failed]);
    try {
      await awaitReady(reader, driver, signal);
      let lastBeat = clock.now();
      let lastSequence = -1;
      for (;;) {
        const remaining = driver.heartbeatTimeoutMs - (clock.now() - lastBeat);
        if (remaining <= 0) throw timeout("heartbeat", driver.heartbeatTimeoutMs);
        const next = await reader.next(remaining, signal);
        if (next === "timeout") continue;
        const event = expectEvent(next);
        switch (event.type) {
          case "heartbeat":
            if (event.sequence <= lastSequence)
              throw protocol(`heartbeat sequence ${event.sequence} does not increase`);
            lastSequence = event.sequence;
            lastBeat = clock.now();
            break;
          case "checkpoint":
            commits.answer(event);
            break;
          case "completed":
            await commits.settled();
            if (event.exitCode !== 0)
              throw failed(`supervised harness exited with code ${event.exitCode}`);
            await drainCompleted(channel, reader, driver, signal);
            return { type: "completed" };
          case "error":
            throw failed(event.message);
          default:
            throw protocol(`unexpected ${event.type} event`);
        }
      }
    } catch (error) {
      throw commits.error() ?? error;
    }
  }

  /** Waits for `ready` within `readyTimeoutMs`; heartbeats before it are ignored (supervisors may beat as soon as they spawn). */
  async function awaitReady(
    reader: EventReader,
    driver: OpenmaSupervisedDriverDeclaration,
    signal: AbortSignal,
  ): Promise<void> {
    const deadline = clock.now() + driver.readyTimeoutMs;
    for (;;) {
      const remaining = deadline - clock.now();
      if (remaining <= 0) throw timeout("ready", driver.readyTimeoutMs);
      const next = await reader.next(remaining, signal);
      if (next === "timeout") continue;
      const event = expectEvent(next);
      if (event.type === "heartbeat") continue;
      if (event.type === "error") throw failed(event.message);
      if (event.type !== "ready") throw protocol(`expected ready, received ${event.type}`);
      return;
    }
  }

  /**
   * After `completed`: sends `drain` and waits up to `drainTimeoutMs` for `drained`, so an `error` the
   * supervisor reports while flushing still fails the run. Heartbeats are ignored; checkpoints are refused.
   */
  async function drainCompleted(
    channel: HarnessSupervisorChannel,
    reader: EventReader,
    driver: OpenmaSupervisedDriverDeclaration,
    signal: AbortSignal,
  ): Promise<void> {
    // A supervisor that exited after `completed` cannot take the command; what it wrote before is still read.
    await channel.send({ type: "drain" }).catch(() => undefined);
    const deadline = clock.now() + driver.drainTimeoutMs;
    for (let remaining = driver.drainTimeoutMs; remaining > 0; remaining = deadline - clock.now()) {
      const next = await reader.next(remaining, signal);
      if (next === "timeout") continue;
      if (next === "end") return;
      const event = parseHarnessSupervisorEvent(next, { code: "upstream_protocol" });
      if (event.type === "drained") return;
      if (event.type === "error") throw failed(event.message);
      if (event.type === "checkpoint") {
        await channel.send({
          type: "checkpoint.reject",
          checkpointId: event.checkpointId,
          message: "the run is draining",
        });
      } else if (event.type !== "heartbeat") {
        throw protocol(`unexpected ${event.type} event while draining`);
      }
    }
  }

  async function drain(
    channel: HarnessSupervisorChannel,
    reader: EventReader,
    driver: OpenmaSupervisedDriverDeclaration,
  ): Promise<void> {
    try {
      await channel.send({ type: "drain" });
      const deadline = clock.now() + driver.drainTimeoutMs;
      for (
        let remaining = driver.drainTimeoutMs;
        remaining > 0;
        remaining = deadline - clock.now()
      ) {
        const next = await reader.next(remaining);
        if (next === "timeout" || next === "end" || next.type === "drained") break;
        if (next.type === "checkpoint") {
          await channel.send({
            type: "checkpoint.reject",
            checkpointId: next.checkpointId,
            message: "the run is draining",
          });
        }
      }
    } catch {
      // A broken channel while draining still gets the stop below.
    }
    await channel.send({ type: "stop", reason: "aborted" }).catch(() => undefined);
  }
}

function expectEvent(next: HarnessSupervisorEvent | "end"): HarnessSupervisorEvent {
  if (next === "end") throw protocol("the supervisor event stream ended before completed");
  return parseHarnessSupervisorEvent(next, { code: "upstream_protocol" });
}

function timeout(what: "ready" | "heartbeat", ms: number): TimeoutError {
  return new TimeoutError({
    message: `supervisor sent no ${what} within ${ms} ms`,
    context: { stage: `supervisor-${what}`, timeoutMs: ms },
  });
}

function failed(message: string): SandboxFailedError {
  return new SandboxFailedError({
    message: `supervised harness failed: ${message}`,
    context: { stage: "supervisor" },
  });
}

function protocol(message: string): UpstreamProtocolError {
  return new UpstreamProtocolError({
    message: `supervisor protocol violation: ${message}`,
    context: { stage: "supervisor" },
  });
}
