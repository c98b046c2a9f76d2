import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { createMemoryBudget, processMemoryBudget } from "../src/memory-budget.js";

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe("memory budget", () => {
  it("admits requests while they fit and makes the rest wait, first come first served", async () => {
    const budget = createMemoryBudget({ maxBytes: 10 });
    const first = await budget.acquire(6);
    const order: string[] = [];
    const large = budget.acquire(8).then((lease) => (order.push("large"), lease));
    const small = budget.acquire(2).then((lease) => (order.push("small"), lease));
    await settled();
    // 2 bytes would fit now, but the 8-byte request came first and is not overtaken.
    expect(order).toEqual([]);
    expect(budget).toMatchObject({ heldBytes: 6, waiting: 2 });
    first.release();
    const largeLease = await large;
    const smallLease = await small;
    expect(order).toEqual(["large", "small"]);
    expect(budget.heldBytes).toBe(10);
    largeLease.release();
    smallLease.release();
    expect(budget).toMatchObject({ heldBytes: 0, peakBytes: 10, waiting: 0 });
  });

  it("holds a request larger than the budget as the whole budget, so it runs alone", async () => {
    const budget = createMemoryBudget({ maxBytes: 10 });
    const lease = await budget.acquire(25);
    expect(lease.bytes).toBe(10);
    let second = false;
    const next = budget.acquire(1).then((held) => ((second = true), held));
    await settled();
    expect(second).toBe(false);
    lease.release();
    lease.release();
    (await next).release();
    expect(budget.heldBytes).toBe(0);
  });

  it("never holds more than its size under many concurrent users", async () => {
    const budget = createMemoryBudget({ maxBytes: 32 });
    let concurrent = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        budget.use(8, async () => {
          concurrent += 1;
          most = Math.max(most, concurrent);
          await new Promise((resolve) => setTimeout(resolve, index % 3));
          concurrent -= 1;
        }),
      ),
    );
    expect(most).toBe(4);
    expect(budget).toMatchObject({ heldBytes: 0, peakBytes: 32 });
  });

  it("releases when the task throws", async () => {
    const budget = createMemoryBudget({ maxBytes: 4 });
    await expect(budget.use(4, async () => Promise.reject(new Error("boom")))).rejects.toThrow(
      "boom",
    );
    expect(budget.heldBytes).toBe(0);
  });

  it("rejects a waiter with aborted when its signal fires, and lets the next one in", async () => {
    const budget = createMemoryBudget({ maxBytes: 4 });
    const held = await budget.acquire(3);
    const controller = new AbortController();
    const aborted = budget.acquire(4, controller.signal);
    const after = budget.acquire(1);
    controller.abort(new Error("stop"));
    const error = await aborted.catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(error, "aborted")).toBe(true);
    // The aborted head no longer blocks a request that fits.
    (await after).release();
    held.release();
    expect(budget).toMatchObject({ heldBytes: 0, waiting: 0 });
    await expect(budget.acquire(1, controller.signal)).rejects.toMatchObject({ code: "aborted" });
  });

  it("refuses a size that is not a positive safe integer with invalid_config", () => {
    for (const maxBytes of [0, -1, 1.5, Number.NaN]) {
      expect(() => createMemoryBudget({ maxBytes })).toThrow(
        expect.objectContaining({ code: "invalid_config" }),
      );
    }
  });

  it("is one budget per process", () => {
    expect(processMemoryBudget()).toBe(processMemoryBudget());
  });
});
