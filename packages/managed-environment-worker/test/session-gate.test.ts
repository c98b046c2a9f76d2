import { describe, expect, it } from "vitest";
import { conflictDelayMs, createSessionGate } from "../src/session-gate.js";

describe("session gate", () => {
  it("wakes a waiter when a run of the same session settles, not another session's", async () => {
    const gate = createSessionGate();
    const leave = gate.enter("s1");
    const other = gate.enter("s2");
    let woke = false;
    const waiting = gate.waitForRelease("s1", 3_600_000, new AbortController().signal).then(() => {
      woke = true;
    });
    other();
    await new Promise((resolve) => setImmediate(resolve));
    expect(woke).toBe(false);
    leave();
    await waiting;
    expect(woke).toBe(true);
  });

  it("ends a wait when the signal aborts", async () => {
    const controller = new AbortController();
    const waiting = createSessionGate().waitForRelease("s", 3_600_000, controller.signal);
    controller.abort();
    await expect(waiting).resolves.toBeUndefined();
  });
});

describe("conflictDelayMs", () => {
  const policy = { baseDelayMs: 100, maxDelayMs: 1_000 };
  it("backs off exponentially to the cap without an expiry", () => {
    expect([1, 2, 3, 4, 5, 6].map((attempt) => conflictDelayMs(attempt, null, policy))).toEqual([
      100, 200, 400, 800, 1_000, 1_000,
    ]);
  });
  it("waits for a fence that expires sooner than the backoff", () => {
    const soon = new Date(Date.now() + 300).toISOString();
    const delay = conflictDelayMs(5, soon, policy);
    expect(delay).toBeGreaterThan(100);
    expect(delay).toBeLessThan(1_000);
  });
});
