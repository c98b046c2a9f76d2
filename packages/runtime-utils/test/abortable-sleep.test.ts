import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { abortReason, abortableSleep, raceAbort } from "../src/index.js";

describe("abortableSleep", () => {
  it("resolves after the delay", async () => {
    const started = Date.now();
    await abortableSleep(20);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
  });

  it("rejects with the signal's Error reason, or aborted for any other reason", async () => {
    const lost = new Error("lease lost");
    const controller = new AbortController();
    const sleeping = abortableSleep(60_000, controller.signal);
    controller.abort(lost);
    await expect(sleeping).rejects.toBe(lost);
    const other = new AbortController();
    other.abort("not an error");
    const error = await abortableSleep(60_000, other.signal).catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(error, "aborted")).toBe(true);
  });
});

describe("raceAbort", () => {
  it("settles with the promise when the signal stays quiet", async () => {
    await expect(raceAbort(Promise.resolve(7), new AbortController().signal)).resolves.toBe(7);
    await expect(
      raceAbort(Promise.reject(new Error("own")), new AbortController().signal),
    ).rejects.toThrow("own");
  });

  it("stops waiting for a promise that never settles when the signal fires", async () => {
    const controller = new AbortController();
    const waiting = raceAbort(new Promise<never>(() => undefined), controller.signal);
    controller.abort();
    const error = await waiting.catch((caught: unknown) => caught);
    expect(error).toBe(abortReason(controller.signal));
  });

  it("rejects with the caller's reason when one is given", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      raceAbort(
        new Promise<never>(() => undefined),
        controller.signal,
        () => new RangeError("mine"),
      ),
    ).rejects.toThrow("mine");
  });

  it("rejects at once for a signal that already fired", async () => {
    const controller = new AbortController();
    controller.abort(new Error("gone"));
    await expect(raceAbort(Promise.resolve(1), controller.signal)).rejects.toThrow("gone");
  });
});
