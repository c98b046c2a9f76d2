import { describe, expect, it } from "vitest";
import {
  type HarnessRunInput,
  type HarnessSupervisorCommand,
  type HarnessSupervisorEvent,
  type HarnessSupervisorTransportPort,
  LeaseLostError,
} from "@open-managed-agents/runtime-resource-contract";
import { createSupervisedSandboxHarnessDriver } from "../src/supervisor/supervised-harness-driver.js";
import { settleWithManualTime } from "../src/testing/manual-drive.js";
import { createManualTime } from "../src/time.js";
import { scope, supervisedDriver as driver } from "./support/fixture.js";
import { fence, harness, ready, until } from "./support/supervised-run.js";

const baseInput: Omit<HarnessRunInput, "signal"> = {
  scope,
  fence,
  sandbox: { provider: "fake", runtimeId: "rt-1" },
  workspacePath: "/workspace",
  outputPath: null,
  driver,
};

describe("supervised lane: completion drains", () => {
  it("sends drain after completed and resolves only once drained arrives", async () => {
    const commands: HarnessSupervisorCommand[] = [];
    let drainedSent = false;
    const { run, transport } = harness(async (side) => {
      await until(side, "start");
      await side.emit(ready);
      await side.emit({ type: "completed", exitCode: 0 });
      commands.push(...(await until(side, "drain")));
      drainedSent = true;
      await side.emit({ type: "drained" });
    });
    await expect(run()).resolves.toEqual({ type: "completed" });
    expect(drainedSent).toBe(true);
    expect(commands.map((command) => command.type)).toEqual(["drain"]);
    expect(transport.stdin()).not.toContain('"type":"stop"');
  });

  it("fails the run on an error event after completed and tells the supervisor to stop", async () => {
    const { run, transport } = harness(async (side) => {
      await until(side, "start");
      await side.emit(ready);
      await side.emit({ type: "completed", exitCode: 0 });
      await side.emit({ type: "error", message: "flush failed" });
    });
    await expect(run()).rejects.toMatchObject({
      code: "sandbox_failed",
      message: expect.stringContaining("flush failed"),
    });
    expect(transport.stdin()).toContain('{"type":"stop","reason":"failed"}');
  });

  it("bounds the wait for drained by drainTimeoutMs", async () => {
    const { run, time, transport } = harness(async (side) => {
      await until(side, "start");
      await side.emit(ready);
      await side.emit({ type: "completed", exitCode: 0 });
    });
    const started = time.now();
    await expect(run()).resolves.toEqual({ type: "completed" });
    expect(time.now() - started).toBeGreaterThanOrEqual(driver.drainTimeoutMs);
    expect(transport.stdin()).toContain('{"type":"drain"}');
  });
});

describe("supervised lane: a supervisor that exited after completed", () => {
  /** A channel over fixed events whose stdin is closed for everything after `start`. */
  function exitedSupervisor(
    events: readonly HarnessSupervisorEvent[],
  ): HarnessSupervisorTransportPort & { sent: string[] } {
    const sent: string[] = [];
    return {
      sent,
      async open() {
        return {
          async send(command) {
            sent.push(command.type);
            if (command.type !== "start") throw new Error("stdin is closed: the supervisor exited");
          },
          async *events() {
            yield* events;
          },
          close: async () => undefined,
        };
      },
    };
  }

  it.each([
    [
      "completes when drain cannot be sent and the stream ends",
      [ready, { type: "completed", exitCode: 0 }],
      null,
    ],
    [
      "still fails on an error it wrote before exiting",
      [ready, { type: "completed", exitCode: 0 }, { type: "error", message: "flush failed" }],
      "flush failed",
    ],
  ] as const)("%s", async (_name, events, failure) => {
    const transport = exitedSupervisor(events);
    const time = createManualTime();
    const supervised = createSupervisedSandboxHarnessDriver({
      transport,
      clock: time,
      scheduler: time,
    });
    const run = settleWithManualTime(
      supervised.run({ ...baseInput, signal: new AbortController().signal }),
      time,
      { stepMs: 250 },
    );
    if (failure)
      await expect(run).rejects.toMatchObject({
        code: "sandbox_failed",
        message: expect.stringContaining(failure),
      });
    else await expect(run).resolves.toEqual({ type: "completed" });
    expect(transport.sent.slice(0, 2)).toEqual(["start", "drain"]);
  });
});

describe("supervised lane: live checkpoint commit failure", () => {
  it("answers a failed commit with checkpoint.reject naming the error, then fails the run with stop{failed}", async () => {
    let completedSent = false;
    const commitError = new LeaseLostError({
      message: "lease lost (publish_refused) during fence-publish-turn-1",
    });
    const { run, transport } = harness(
      async (side) => {
        await until(side, "start");
        await side.emit(ready);
        await side.emit({ type: "checkpoint", checkpointId: "turn-1", sessionId: "ses-1" });
        await until(side, "stop");
        completedSent = true;
        await side.emit({ type: "completed", exitCode: 0 });
      },
      async () => {
        throw commitError;
      },
    );
    await expect(run()).rejects.toBe(commitError);
    const stdin = transport.stdin();
    const rejected = stdin.indexOf('"type":"checkpoint.reject","checkpointId":"turn-1"');
    expect(rejected).toBeGreaterThan(-1);
    expect(stdin).toContain(
      "the checkpoint was not committed (lease_lost: lease lost (publish_refused)",
    );
    expect(stdin.indexOf('{"type":"stop","reason":"failed"}')).toBeGreaterThan(rejected);
    expect(completedSent).toBe(true);
  });

  it("fails the run when the commit fails after completed arrived", async () => {
    let release: (error: Error) => void = () => undefined;
    let markStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (markStarted = resolve));
    const { run, transport, time } = harness(
      async (side) => {
        await until(side, "start");
        await side.emit(ready);
        await side.emit({ type: "checkpoint", checkpointId: "turn-1", sessionId: "ses-1" });
        await started;
        await side.emit({ type: "completed", exitCode: 0 });
        await time.sleep(1_000);
        release(new Error("workspace checkpoint failed"));
      },
      () =>
        new Promise<void>((_resolve, reject) => {
          release = reject;
          markStarted();
        }),
    );
    await expect(run()).rejects.toThrow("workspace checkpoint failed");
    expect(transport.stdin()).toContain('{"type":"stop","reason":"failed"}');
    // An untyped error's text stays on the host: the supervisor is told only that the commit failed.
    expect(transport.stdin()).toContain("the checkpoint was not committed (internal)");
    expect(transport.stdin()).not.toContain("workspace checkpoint failed");
    expect(transport.stdin()).not.toContain('{"type":"drain"}');
  });
});

describe("supervised lane: ready", () => {
  it("ignores heartbeats that arrive before ready", async () => {
    const { run } = harness(async (side) => {
      await until(side, "start");
      await side.emit({ type: "heartbeat", sequence: 1 });
      await side.emit({ type: "heartbeat", sequence: 2 });
      await side.emit(ready);
      await side.emit({ type: "heartbeat", sequence: 1 });
      await side.emit({ type: "completed", exitCode: 0 });
      await until(side, "drain");
      await side.emit({ type: "drained" });
    });
    await expect(run()).resolves.toEqual({ type: "completed" });
  });

  it("still requires ready within readyTimeoutMs while heartbeats arrive", async () => {
    const { run, time } = harness(async (side) => {
      await until(side, "start");
      for (let sequence = 1; sequence <= 20; sequence += 1) {
        await side.emit({ type: "heartbeat", sequence });
        await time.sleep(1_000);
      }
    });
    await expect(run()).rejects.toMatchObject({
      code: "timeout",
      message: expect.stringContaining("no ready within 5000 ms"),
    });
  });
});

describe("supervised lane: timeouts of the declaration", () => {
  it.each([
    ["readyTimeoutMs", 0],
    ["readyTimeoutMs", 1.5],
    ["heartbeatTimeoutMs", 0],
    ["heartbeatTimeoutMs", -1],
    ["drainTimeoutMs", 1.5],
    ["drainTimeoutMs", Number.MAX_SAFE_INTEGER + 2],
    ["drainTimeoutMs", Number.NaN],
  ] as const)("refuses %s = %s with invalid_request before sending start", async (field, value) => {
    const { run, transport } = harness(async () => undefined, undefined, {
      driver: { ...driver, [field]: value },
    });
    await expect(run()).rejects.toMatchObject({
      code: "invalid_request",
      context: { path: `driver.${field}` },
    });
    expect(transport.stdin()).not.toContain('"type":"start"');
    expect(transport.closed()).toBe(0);
  });
});
