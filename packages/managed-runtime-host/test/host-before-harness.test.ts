import { describe, expect, it } from "vitest";
import { amaProfile, callSequence, createHostFixture } from "./support/fixture.js";

describe("beforeHarness", () => {
  it("runs once the sandbox is prepared, right before the harness, whose environment gets its variables", async () => {
    const fixture = createHostFixture();
    const seen: string[][] = [];
    const result = await fixture.run({
      beforeHarness: async () => {
        seen.push(callSequence(fixture.journal));
        return { OMA_HANDED: "value-1" };
      },
    });
    expect(result.type).toBe("completed");
    expect(seen).toHaveLength(1);
    const before = seen[0] as string[];
    for (const call of ["workspace.materialize", "sandbox.acquire", "workspace.attach"])
      expect(before).toContain(call);
    expect(before).not.toContain("harnessDriver.run");
    // The harness was the next port call, and it ran with the profile's env plus the added variable.
    expect(callSequence(fixture.journal)[before.length]).toBe("harnessDriver.run");
    const runs = fixture.journal.of("harnessDriver.run");
    expect(runs).toHaveLength(1);
    const input = runs[0]?.input as { driver?: typeof amaProfile.driver } | undefined;
    const driver = input?.driver;
    expect(driver?.type === "ama_worker" && driver.process.env).toEqual({
      ...(amaProfile.driver.type === "ama_worker" ? amaProfile.driver.process.env : {}),
      OMA_HANDED: "value-1",
    });
  });

  it("a rejection fails the run at harness-run with no harness started, and cleanup still runs", async () => {
    const fixture = createHostFixture();
    const result = await fixture.run({
      beforeHarness: async () => {
        throw new Error("the caller could not hand over");
      },
    });
    expect(result.type).toBe("failed");
    expect(result.type === "failed" && result.error.context?.stage).toBe("harness-run");
    expect(fixture.journal.of("harnessDriver.run")).toHaveLength(0);
    expect(fixture.journal.of("sandbox.terminate")).toHaveLength(1);
    expect(fixture.journal.of("fences.publish")).toHaveLength(0);
  });

  it("is not called when the run ends before the harness", async () => {
    const fixture = createHostFixture();
    fixture.deps.faults.add({ port: "workspace", method: "materialize", kind: "throw" });
    let called = 0;
    const result = await fixture.run({
      beforeHarness: async () => {
        called += 1;
        return undefined;
      },
    });
    expect(result.type).toBe("failed");
    expect(called).toBe(0);
  });
});
