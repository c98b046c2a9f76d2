import { describe, expect, it } from "vitest";
import {
  type HarnessCheckpointRequest,
  type HarnessSupervisorCommand,
  InvalidRequestError,
} from "@open-managed-agents/runtime-resource-contract";
import { composeSandboxHarnessDrivers } from "../src/supervisor/compose-harness-drivers.js";
import { createSupervisedSandboxHarnessDriver } from "../src/supervisor/supervised-harness-driver.js";
import { createScriptedHarnessDriver } from "../src/testing/fake-harness.js";
import type { SupervisorSide } from "./support/fake-supervisor.js";
import { scope, supervisedDriver as driver } from "./support/fixture.js";
import { fence, harness, ready, until } from "./support/supervised-run.js";

describe("createSupervisedSandboxHarnessDriver", () => {
  it("starts, commits a live checkpoint through the host callback and completes; the token never reaches the supervisor", async () => {
    const requests: HarnessCheckpointRequest[] = [];
    let answer: HarnessSupervisorCommand | undefined;
    const { run, transport } = harness(
      async (side) => {
        const [start] = await until(side, "start");
        expect(start).toEqual({
          type: "start",
          scope,
          harness: driver.harness,
          workspacePath: "/workspace",
          outputPath: "/mnt/session/outputs",
        });
        await side.emit(ready);
        await side.emit({ type: "heartbeat", sequence: 1 });
        await side.emit({
          type: "checkpoint",
          checkpointId: "turn-1",
          sessionId: "ses-1",
          turnId: "t1",
        });
        answer = (await until(side, "checkpoint.commit")).at(-1);
        await side.emit({ type: "completed", exitCode: 0 });
      },
      async (request) => void requests.push(request),
    );
    await expect(run()).resolves.toEqual({ type: "completed" });
    expect(requests).toEqual([{ checkpointId: "turn-1", sessionId: "ses-1", turnId: "t1" }]);
    expect(answer).toEqual({ type: "checkpoint.commit", checkpointId: "turn-1" });
    expect(transport.stdin()).not.toContain(fence.token);
    expect(transport.closed()).toBe(1);
  });

  it("answers a checkpoint the host refuses (invalid_request) with checkpoint.reject carrying the reason", async () => {
    let answer: HarnessSupervisorCommand | undefined;
    const { run } = harness(
      async (side) => {
        await until(side, "start");
        await side.emit(ready);
        await side.emit({ type: "checkpoint", checkpointId: "turn-1", sessionId: "ses-1" });
        answer = (await until(side, "checkpoint.reject")).at(-1);
        await side.emit({ type: "completed", exitCode: 0 });
      },
      async () => {
        throw new InvalidRequestError({
          message: "live checkpoint refused: checkpoint id was already used in this run",
          context: { stage: "live-checkpoint" },
        });
      },
    );
    await expect(run()).resolves.toEqual({ type: "completed" });
    expect(answer).toEqual({
      type: "checkpoint.reject",
      checkpointId: "turn-1",
      message: "live checkpoint refused: checkpoint id was already used in this run",
    });
  });

  it("keeps reading heartbeats while a checkpoint commit takes longer than the heartbeat timeout", async () => {
    let release: () => void = () => undefined;
    const { run, time } = harness(
      async (side) => {
        await until(side, "start");
        await side.emit(ready);
        await side.emit({ type: "checkpoint", checkpointId: "slow", sessionId: "ses-1" });
        for (let sequence = 1; sequence <= 8; sequence += 1) {
          await time.sleep(1_000);
          await side.emit({ type: "heartbeat", sequence });
        }
        release();
        await until(side, "checkpoint.commit");
        await side.emit({ type: "completed", exitCode: 0 });
      },
      (): Promise<void> =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
    );
    await expect(run()).resolves.toEqual({ type: "completed" });
  });

  it.each([
    [
      "no ready before readyTimeoutMs",
      async (side: SupervisorSide): Promise<void> => {
        await until(side, "start");
      },
      "timeout",
      "no ready within 5000 ms",
    ],
    [
      "no heartbeat within heartbeatTimeoutMs",
      async (side: SupervisorSide) => {
        await until(side, "start");
        await side.emit(ready);
      },
      "timeout",
      "no heartbeat within 3000 ms",
    ],
    [
      "a non-zero exit",
      async (side: SupervisorSide) => {
        await until(side, "start");
        await side.emit(ready);
        await side.emit({ type: "completed", exitCode: 3 });
      },
      "sandbox_failed",
      "exited with code 3",
    ],
    [
      "an error event",
      async (side: SupervisorSide) => {
        await until(side, "start");
        await side.emit(ready);
        await side.emit({ type: "error", message: "harness crashed" });
      },
      "sandbox_failed",
      "harness crashed",
    ],
    [
      "a malformed line",
      async (side: SupervisorSide) => {
        await until(side, "start");
        await side.raw("{oops\n");
      },
      "upstream_protocol",
      "not JSON",
    ],
    [
      "a stream that ends before completed",
      async (side: SupervisorSide) => {
        await until(side, "start");
        await side.emit(ready);
        await side.end();
      },
      "upstream_protocol",
      "ended before completed",
    ],
    [
      "a heartbeat sequence that goes backwards",
      async (side: SupervisorSide) => {
        await until(side, "start");
        await side.emit(ready);
        await side.emit({ type: "heartbeat", sequence: 2 });
        await side.emit({ type: "heartbeat", sequence: 2 });
      },
      "upstream_protocol",
      "does not increase",
    ],
  ] as const)(
    "fails on %s and tells the supervisor to stop",
    async (_name, script, code, message) => {
      const { run, transport } = harness(script);
      await expect(run()).rejects.toMatchObject({
        code,
        message: expect.stringContaining(message),
      });
      expect(transport.stdin()).toContain('{"type":"stop","reason":"failed"}');
    },
  );

  it("drains on abort, waits for drained, sends stop and returns aborted", async () => {
    const commands: HarnessSupervisorCommand[] = [];
    const { run, controller } = harness(async (side) => {
      await until(side, "start");
      await side.emit(ready);
      await side.emit({ type: "heartbeat", sequence: 1 });
      controller.abort();
      commands.push(...(await until(side, "drain")));
      await side.emit({ type: "drained" });
      commands.push(...(await until(side, "stop")));
    });
    await expect(run()).resolves.toEqual({ type: "aborted" });
    expect(commands.map((command) => command.type)).toEqual(["drain", "stop"]);
    expect(commands.at(-1)).toEqual({ type: "stop", reason: "aborted" });
  });

  it("still stops and returns aborted when drained never comes", async () => {
    const { run, controller, transport } = harness(async (side) => {
      await until(side, "start");
      await side.emit(ready);
      controller.abort();
    });
    await expect(run()).resolves.toEqual({ type: "aborted" });
    expect(transport.stdin()).toContain('{"type":"drain"}');
    expect(transport.stdin()).toContain('{"type":"stop","reason":"aborted"}');
  });

  it("refuses another lane with capability_unsupported", async () => {
    const { supervised } = harness(async () => undefined);
    await expect(
      supervised.run({
        scope,
        fence,
        sandbox: { provider: "fake", runtimeId: "rt" },
        workspacePath: "/workspace",
        outputPath: null,
        driver: { type: "ama_worker", process: { command: "w" } },
        signal: new AbortController().signal,
      }),
    ).rejects.toMatchObject({ code: "capability_unsupported" });
    expect(await supervised.driverCapabilities(scope)).toEqual({ drivers: ["openma_supervised"] });
  });

  it("validates its options", () => {
    expect(() => createSupervisedSandboxHarnessDriver({ transport: {} as never })).toThrowError(
      expect.objectContaining({ code: "invalid_config" }),
    );
  });
});

describe("composeSandboxHarnessDrivers", () => {
  const base = {
    scope,
    fence,
    sandbox: { provider: "fake", runtimeId: "rt" },
    workspacePath: "/workspace",
    outputPath: null,
    signal: new AbortController().signal,
  } as const;

  it("offers the union of lanes and runs each on the driver that lists it", async () => {
    const ran: string[] = [];
    const worker = createScriptedHarnessDriver({
      lanes: ["ama_worker"],
      script: async () => (ran.push("worker"), { type: "completed" }),
    });
    const supervised = createScriptedHarnessDriver({
      lanes: ["openma_supervised"],
      script: async () => (ran.push("supervised"), { type: "completed" }),
    });
    const composed = composeSandboxHarnessDrivers(worker, supervised);
    expect(await composed.driverCapabilities(scope)).toEqual({
      drivers: ["ama_worker", "openma_supervised"],
    });
    await composed.run({ ...base, driver: { type: "ama_worker", process: { command: "w" } } });
    await composed.run({ ...base, driver });
    expect(ran).toEqual(["worker", "supervised"]);
    await expect(
      composeSandboxHarnessDrivers(worker).run({ ...base, driver }),
    ).rejects.toMatchObject({ code: "capability_unsupported" });
    expect(() => composeSandboxHarnessDrivers()).toThrowError(
      expect.objectContaining({ code: "invalid_config" }),
    );
  });

  it("refuses two drivers that claim the same lane, rather than running whichever comes first", async () => {
    const ran: string[] = [];
    const worker = createScriptedHarnessDriver({
      lanes: ["ama_worker"],
      script: async () => (ran.push("worker"), { type: "completed" }),
    });
    const both = createScriptedHarnessDriver({
      lanes: ["openma_supervised", "ama_worker"],
      script: async () => (ran.push("both"), { type: "completed" }),
    });
    const composed = composeSandboxHarnessDrivers(worker, both);
    const duplicate = {
      code: "invalid_config",
      context: { path: "drivers.1", driver: "ama_worker" },
    };
    await expect(composed.driverCapabilities(scope)).rejects.toMatchObject(duplicate);
    await expect(composed.run({ ...base, driver })).rejects.toMatchObject(duplicate);
    expect(ran).toEqual([]);
  });
});
