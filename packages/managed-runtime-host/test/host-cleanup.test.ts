import { describe, expect, it } from "vitest";
import { createHostFixture, serializedOutputs } from "./support/fixture.js";
import { tokensOf } from "./support/invariants.js";

describe("cleanup", () => {
  it("keeps a completed result when cleanup fails, listing each cleanup error with its stage", async () => {
    const fixture = createHostFixture();
    fixture.deps.faults.add({ port: "workspace", method: "release", kind: "throw" });
    fixture.deps.faults.add({ port: "fences", method: "release", kind: "hang" });
    const result = await fixture.run();
    expect(result.type).toBe("completed");
    if (result.type !== "completed") return;
    expect(result.cleanupErrors.map((error) => [error.context.stage, error.code])).toEqual([
      ["workspace-release", "internal"],
      ["fence-release", "timeout"],
    ]);
    const serialized = await serializedOutputs(fixture, result);
    for (const token of tokensOf(fixture.journal)) expect(serialized).not.toContain(token);
  });

  it("enqueues a token-free orphan when terminate fails", async () => {
    const fixture = createHostFixture();
    fixture.deps.faults.add({ port: "sandbox", method: "terminate", kind: "throw" });
    const result = await fixture.run();
    expect(result.type).toBe("completed");
    const [orphan] = await fixture.deps.orphanStore.list({ limit: 10 });
    expect(orphan).toMatchObject({
      sandbox: { provider: "fake", runtimeId: "fake-rt-1" },
      reason: "completed",
      generation: 1,
      ownerId: "owner-a",
    });
    expect(orphan?.lastError).toContain("[redacted]");
    const [token] = tokensOf(fixture.journal);
    expect(token).toBeDefined();
    expect(JSON.stringify(orphan)).not.toContain(token);
    expect(fixture.logger.entries.some((entry) => entry.event === "sandbox.orphaned")).toBe(true);
  });

  // Without a journal the driver is never told the run ended, so a slow acquire still delivers its lease.
  it("terminates a lease that arrives after the run stopped waiting for it", async () => {
    const fixture = createHostFixture({ host: { journal: undefined } });
    const controller = new AbortController();
    fixture.deps.faults.add({ port: "sandbox", method: "acquire", kind: "delay", delayMs: 3_000 });
    fixture.journal.onCall((call) => {
      if (call.port === "sandbox" && call.method === "acquire")
        setImmediate(() => controller.abort());
    });
    const result = await fixture.run({ signal: controller.signal }, 500);
    expect(result).toMatchObject({
      type: "lease_lost",
      error: { context: { trigger: "caller_aborted", inFlight: ["sandbox-acquire"] } },
    });
    expect(fixture.deps.sandbox.runtimes.get("fake-rt-1")?.state).toBe("stopped");
    expect(fixture.logger.entries.some((entry) => entry.event === "sandbox.late_lease")).toBe(true);
  });
  it("enqueues an orphan for a lease that arrives after the run has returned", async () => {
    const fixture = createHostFixture({ host: { journal: undefined } });
    const controller = new AbortController();
    fixture.deps.faults.add({ port: "sandbox", method: "acquire", kind: "delay", delayMs: 20_000 });
    fixture.journal.onCall((call) => {
      if (call.port === "sandbox" && call.method === "acquire")
        setImmediate(() => controller.abort());
    });
    const result = await fixture.run({ signal: controller.signal }, 500);
    expect(result.type).toBe("lease_lost");
    expect(await fixture.deps.orphanStore.list({ limit: 10 })).toEqual([]);
    await fixture.time.advance(30_000);
    await new Promise<void>((resolve) => setImmediate(resolve));
    const [orphan] = await fixture.deps.orphanStore.list({ limit: 10 });
    expect(orphan).toMatchObject({
      sandbox: { runtimeId: "fake-rt-1" },
      reason: "lease_lost",
      lastError: "the lease arrived after the run had ended",
    });
  });
});

describe("logging", () => {
  it("never writes a fence token, even when ports throw it back", async () => {
    const fixture = createHostFixture({ runtime: { harness: { checkpoints: ["cp-1"] } } });
    fixture.deps.faults.add({ port: "outputs", method: "release", kind: "throw" });
    fixture.deps.faults.add({ port: "sandbox", method: "terminate", kind: "throw" });
    fixture.deps.faults.add({
      port: "workspace",
      method: "checkpoint",
      kind: "throw",
      occurrence: 2,
    });
    const result = await fixture.run();
    expect(result.type).toBe("failed");
    const tokens = tokensOf(fixture.journal);
    expect(tokens.length).toBe(2);
    const thrown = fixture.journal.calls
      .filter((call) => call.status === "rejected")
      .map((call) => String((call.error as Error).message));
    expect(thrown.some((message) => tokens.some((token) => message.includes(token)))).toBe(true);
    expect(fixture.logger.entries.length).toBeGreaterThan(5);
    const serialized = await serializedOutputs(fixture, result);
    for (const token of tokens) expect(serialized).not.toContain(token);
  });

  it("with a journal, refuses the journal write of an acquire that outlived the run, so nothing starts", async () => {
    const fixture = createHostFixture();
    const controller = new AbortController();
    fixture.deps.faults.add({ port: "sandbox", method: "acquire", kind: "delay", delayMs: 3_000 });
    fixture.journal.onCall((call) => {
      if (call.port === "sandbox" && call.method === "acquire")
        setImmediate(() => controller.abort());
    });
    const result = await fixture.run({ signal: controller.signal }, 500);
    expect(result.type).toBe("lease_lost");
    await fixture.time.advance(30_000);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(fixture.deps.sandbox.runtimes.size).toBe(0);
    expect(await fixture.deps.sandboxJournal.list({ limit: 10 })).toEqual([]);
  });
});
