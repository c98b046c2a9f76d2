/** Deleting a session through the real SDK in workerd kills every process started in it, as on Cloudflare. */
import { describe, expect, it } from "vitest";
import { useSdkHarness } from "./sdk-harness.js";

const sdk = useSdkHarness("fidelity-worker.ts");

describe("deleteSession through the SDK", () => {
  it("kills the session's background processes and what its shell left running, within a few seconds", async () => {
    const body = await sdk().run("session-delete");
    expect(body.before).toEqual({ background: true, shellChild: true });
    expect(body.gone).toBe(true);
    expect(body.goneAfter).toBeLessThan(10_000);
    expect(body.status).toBe("killed");
  }, 90_000);
});
