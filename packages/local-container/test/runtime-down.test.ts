/**
 * The local container server gone under a running sandbox: what the Sandbox SDK reports names the local
 * container runtime, not a platform update (the SDK reads workerd's "Network connection lost" as one).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SdkHarness, startSdkHarness } from "./sdk-harness.js";

let sdk: SdkHarness;
beforeAll(async () => {
  sdk = await startSdkHarness("runtime-down-worker.ts");
}, 60_000);
afterAll(() => sdk?.stop());

describe("the local container runtime stopped under a running sandbox", () => {
  it("fails the next call naming the unreachable runtime", async () => {
    expect(await sdk.run("exec", "down")).toEqual({ stdout: "hi" });
    await sdk.harness.server.close();
    const { thrown } = await sdk.run("exec", "down");
    console.log("THROWN", thrown);
    expect(String(thrown)).not.toMatch(/platform was updating/);
  }, 120_000);
});
