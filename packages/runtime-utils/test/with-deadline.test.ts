import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { TIMER_CANCELLED, type SleepFunction, withDeadline } from "../src/index.js";

/** A sleep that waits until released by hand, recording how each wait ended. */
function manualSleep(): SleepFunction & { release(): void; ended: unknown[] } {
  const waiters: Array<() => void> = [];
  const ended: unknown[] = [];
  const sleep = ((_ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      waiters.push(resolve);
      signal?.addEventListener("abort", () => {
        ended.push(signal.reason);
        reject(signal.reason);
      });
    })) as SleepFunction & { release(): void; ended: unknown[] };
  sleep.release = () => {
    for (const wake of waiters.splice(0)) wake();
  };
  sleep.ended = ended;
  return sleep;
}

describe("withDeadline", () => {
  it("returns the work's result and cancels its timer", async () => {
    const sleep = manualSleep();
    await expect(withDeadline(async () => "done", { ms: 1_000, sleep })).resolves.toBe("done");
    expect(sleep.ended).toEqual([TIMER_CANCELLED]);
  });

  it("rejects with a timeout naming the operation when the timer fires first", async () => {
    const sleep = manualSleep();
    const waiting = withDeadline(new Promise<never>(() => undefined), {
      ms: 250,
      operation: "destroy",
      sleep,
    });
    sleep.release();
    const error = await waiting.catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(error, "timeout")).toBe(true);
    expect(error).toMatchObject({
      message: "destroy did not finish within 250 ms",
      context: { operation: "destroy", timeoutMs: 250 },
    });
  });

  it("uses the caller's timeout error", async () => {
    const sleep = manualSleep();
    const waiting = withDeadline(new Promise<never>(() => undefined), {
      ms: 5,
      sleep,
      timeoutError: () => new RangeError("case too slow"),
    });
    sleep.release();
    await expect(waiting).rejects.toThrow(RangeError);
  });

  it("rejects with the signal's reason when the caller aborts first", async () => {
    const controller = new AbortController();
    const waiting = withDeadline(new Promise<never>(() => undefined), {
      ms: 60_000,
      signal: controller.signal,
    });
    controller.abort(new Error("run cancelled"));
    await expect(waiting).rejects.toThrow("run cancelled");
  });

  it("rejects with the caller's abort error when one is given", async () => {
    const controller = new AbortController();
    const waiting = withDeadline(new Promise<never>(() => undefined), {
      ms: 60_000,
      signal: controller.signal,
      abortError: () => new RangeError("exec was aborted"),
    });
    controller.abort(new Error("ignored reason"));
    await expect(waiting).rejects.toThrow("exec was aborted");
  });

  it("passes the work's own failure through", async () => {
    await expect(withDeadline(Promise.reject(new Error("boom")), { ms: 60_000 })).rejects.toThrow(
      "boom",
    );
  });

  it("times out on the real timer", async () => {
    const error = await withDeadline(new Promise<never>(() => undefined), { ms: 10 }).catch(
      (caught: unknown) => caught,
    );
    expect(ManagedRuntimeError.hasCode(error, "timeout")).toBe(true);
  });
});
