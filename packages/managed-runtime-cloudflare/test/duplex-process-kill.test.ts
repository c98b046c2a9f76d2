/**
 * When a duplex process's kill goes out relative to its exit. A scripted `CloudflareSandbox` stands in for
 * the Sandbox Durable Object here, since the point is the order of calls the driver makes; the workerd
 * suites run the same process code against the real Durable Object.
 */
import { describe, expect, it } from "vitest";
import { spawnCloudflareDuplexProcess } from "../src/runtime/duplex-process.js";
import type {
  CloudflareProcessLogEvent,
  CloudflareSandbox,
} from "../src/sandbox/cloudflare-sandbox.js";
import { unreachableSandbox } from "./fake-sandbox.js";

/** A sandbox whose one process ends when `exit` is called and whose kills answer when `answerKills` is. */
function scriptedSandbox() {
  const calls: string[] = [];
  let exit: (code: number) => void = () => undefined;
  const exitCode = new Promise<number>((resolve) => (exit = resolve));
  let answerKills: () => void = () => undefined;
  const killsAnswered = new Promise<void>((resolve) => (answerKills = resolve));
  const sandbox: CloudflareSandbox = {
    ...unreachableSandbox(),
    exec: async (command) => (
      calls.push(`exec ${command.slice(0, 20)}`), { exitCode: 0, stdout: "", stderr: "" }
    ),
    startProcess: async () => (calls.push("startProcess"), { id: "process-1", pid: 7 }),
    async *processLogs(): AsyncGenerator<CloudflareProcessLogEvent> {
      yield { type: "exit", exitCode: await exitCode };
    },
    processStatus: async () => (
      calls.push("processStatus"), { status: "completed", exitCode: await exitCode }
    ),
    killProcess: async (_id, signal) => {
      calls.push(`killProcess ${signal}:start`);
      await killsAnswered;
      calls.push(`killProcess ${signal}:end`);
    },
  };
  return { sandbox, calls, exit, answerKills };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

describe("duplex process kill", () => {
  it("holds the exit back until a kill in flight has answered, so the caller's destroy cannot overtake it", async () => {
    const scripted = scriptedSandbox();
    const process = await spawnCloudflareDuplexProcess(scripted.sandbox, {
      command: "sleep",
      args: ["30"],
    });
    let exitedAt: number | null = null;
    void process.exited.then(() => (exitedAt = scripted.calls.length));
    process.kill("SIGTERM");
    // The process dies of the signal and its log stream reports the exit before the kill call answers.
    scripted.exit(143);
    await tick();
    expect(exitedAt).toBeNull();
    scripted.answerKills();
    expect(await process.exited).toEqual({ code: 143, signal: "SIGTERM" });
    expect(scripted.calls.slice(-2)).toEqual([
      "killProcess SIGTERM:start",
      "killProcess SIGTERM:end",
    ]);
    expect(exitedAt).toBe(scripted.calls.length);
  });

  it("sends nothing when killed after it ended", async () => {
    const scripted = scriptedSandbox();
    scripted.answerKills();
    const process = await spawnCloudflareDuplexProcess(scripted.sandbox, { command: "true" });
    scripted.exit(0);
    expect(await process.exited).toEqual({ code: 0, signal: null });
    const before = scripted.calls.length;
    process.kill("SIGTERM");
    process.kill("SIGKILL");
    await tick();
    expect(scripted.calls.slice(before)).toEqual([]);
  });
});
