import { afterEach, describe, expect, it, vi } from "vitest";
import type { TestCase, TestModule } from "vitest/node";
import {
  STALL_AFTER_FAILURE_EXIT_CODE,
  STALL_EXIT_CODE,
  createStallWatchdog,
} from "../../../../vitest.stall-watchdog.js";

const module = (name: string) =>
  ({ moduleId: `/app/${name}`, relativeModuleId: name }) as TestModule;
type Failure = { message: string; diff?: string; stack?: string };
const testCase = (name: string, state: "passed" | "failed", errors: Failure[] = []) =>
  ({
    fullName: name,
    module: module("test/workerd/lifecycle.test.ts"),
    result: () => ({ state, errors }),
  }) as unknown as TestCase;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A started watchdog with a short stall time, `process.exit` and stderr captured. */
function startWatchdog() {
  const exit = vi.spyOn(process, "exit").mockImplementation((() => undefined) as never);
  const written: string[] = [];
  vi.spyOn(process.stderr, "write").mockImplementation(
    (chunk: string | Uint8Array) => written.push(String(chunk)) > 0,
  );
  const watchdog = createStallWatchdog({ stallMs: 150, checkMs: 10 });
  watchdog.onInit?.({} as never);
  return { exit, written, watchdog };
}

describe("the stall watchdog reporter", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("ends a silent run with exit code 75, naming what ran last and the files not reported finished", async () => {
    const { exit, written, watchdog } = startWatchdog();
    watchdog.onTestModuleQueued?.(module("test/workerd/requests.test.ts"));
    await vi.waitFor(() => expect(exit).toHaveBeenCalledWith(STALL_EXIT_CODE), { timeout: 5_000 });
    expect(exit).toHaveBeenCalledTimes(1);
    expect(written.join("")).toMatch(
      /vitest stalled: no test event for \d+ s\. Last: queued test\/workerd\/requests\.test\.ts at .*Files not reported finished: test\/workerd\/requests\.test\.ts/,
    );
  });

  it("ends a silent run in which a test had failed with exit code 1, naming the failure, so it is never run again", async () => {
    const { exit, written, watchdog } = startWatchdog();
    watchdog.onTestCaseResult?.(testCase("renews the lease", "passed"));
    const stack = [
      "AssertionError: expected 'running' to match /^stopped/",
      ...Array.from(
        { length: 20 },
        (_, line) => `    at frame${line} (lifecycle.test.ts:${line}:1)`,
      ),
    ].join("\n");
    watchdog.onTestCaseResult?.(
      testCase("ends lease_lost", "failed", [
        {
          message: "expected 'running' to match /^stopped/",
          diff: "- /^stopped/\n+ running",
          stack,
        },
      ]),
    );
    await vi.waitFor(() => expect(exit).toHaveBeenCalledTimes(1), { timeout: 5_000 });
    expect(exit).toHaveBeenCalledWith(STALL_AFTER_FAILURE_EXIT_CODE);
    expect(STALL_AFTER_FAILURE_EXIT_CODE).not.toBe(STALL_EXIT_CODE);
    const output = written.join("");
    expect(output).toContain(
      'Failed before the stall: "ends lease_lost" in test/workerd/lifecycle.test.ts.',
    );
    expect(output).not.toContain('renews the lease" in');
    // The run's own failure report never comes after a stall: the watchdog prints the error, its diff and the stack's top.
    expect(output).toContain(
      "FAILED \"ends lease_lost\":\nexpected 'running' to match /^stopped/\n- /^stopped/\n+ running\nAssertionError",
    );
    expect(output).toContain("at frame10 ");
    expect(output).not.toContain("at frame11 ");
  });

  it("lets a run that keeps reporting go on past the stall time, and stops watching when the run ends", async () => {
    const exit = vi.spyOn(process, "exit").mockImplementation((() => undefined) as never);
    const watchdog = createStallWatchdog({ stallMs: 150, checkMs: 10 });
    watchdog.onInit?.({} as never);
    for (let step = 0; step < 10; step += 1) {
      watchdog.onTestModuleStart?.(module(`test/workerd/file-${step}.test.ts`));
      await sleep(50);
    }
    expect(exit).not.toHaveBeenCalled();
    watchdog.onTestRunEnd?.([], [], "passed");
    await sleep(300);
    expect(exit).not.toHaveBeenCalled();
  });
});
