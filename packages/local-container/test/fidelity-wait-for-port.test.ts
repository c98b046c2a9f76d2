/** `Process.waitForPort` (the port-watch route) through the real SDK in workerd, HTTP and TCP modes. */
import { describe, expect, it } from "vitest";
import { useSdkHarness } from "./sdk-harness.js";

const sdk = useSdkHarness("fidelity-worker.ts");

describe("waitForPort through the SDK", () => {
  it("resolves once a process listens (HTTP status in range, or TCP connect) and reports a process that exits first", async () => {
    const body = await sdk().run("wait-for-port");
    expect(body.ready).toBe(true);
    expect(String(body.wrongStatus)).toMatch(/^ProcessReadyTimeoutError: /);
    expect(String(body.exited)).toMatch(/^ProcessExitedBeforeReadyError: .*3/);
  }, 120_000);
});
