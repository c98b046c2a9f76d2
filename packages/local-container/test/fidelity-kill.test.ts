/** Killing a process through the real SDK in workerd: SIGTERM, a grace period, then SIGKILL, as on Cloudflare. */
import { describe, expect, it } from "vitest";
import { useSdkHarness } from "./sdk-harness.js";

const sdk = useSdkHarness("fidelity-worker.ts");

describe("killProcess through the SDK", () => {
  it("reports killed only once the process is dead: SIGTERM ignored → SIGKILL after the grace (137); SIGTERM obeyed → 143", async () => {
    const body = await sdk().run("kill");
    // Right after the kill a process that ignores SIGTERM is still running, and says so.
    expect(body.rightAfter).toEqual({ status: "running", exitCode: null });
    expect(body.stubborn).toEqual({ status: "killed", exitCode: 137 });
    expect(body.deadAfter).toBeGreaterThanOrEqual(4_500);
    expect(body.gentle).toEqual({ status: "killed", exitCode: 143 });
  }, 90_000);
});
