/** A session shell that exits, through the real SDK in workerd: Cloudflare's SESSION_TERMINATED wording. */
import { describe, expect, it } from "vitest";
import { useSdkHarness } from "./sdk-harness.js";

const sdk = useSdkHarness("fidelity-worker.ts");

describe("SESSION_TERMINATED through the SDK", () => {
  it('fails with SessionTerminatedError "shell exited (exit code: N)" and the next call gets a fresh session', async () => {
    const body = await sdk().run("session-terminated");
    expect(body.failure).toBe(
      "SessionTerminatedError: Session 'ending' shell exited (exit code: 7)",
    );
    expect(body.again).toBe("fresh");
  }, 90_000);
});
