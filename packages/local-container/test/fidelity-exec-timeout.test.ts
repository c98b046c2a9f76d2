/** Exec timeouts through the real SDK in workerd, as on Cloudflare's container. */
import { describe, expect, it } from "vitest";
import { useSdkHarness } from "./sdk-harness.js";

const sdk = useSdkHarness("fidelity-worker.ts");

describe("exec timeouts through the SDK", () => {
  it("fail the SDK call with the timeout error; the command lives on in its session until the session is deleted", async () => {
    const body = await sdk().run("exec-timeout");
    expect(body.failure).toBe(
      "CommandError: Failed to execute command 'sleep 60 & echo $! > /tmp/slow.pid; wait' in session 'slow': Command timeout after 500ms",
    );
    expect(body.elapsed).toBeLessThan(20_000);
    expect(body.aliveAfterTimeout).toBe(true);
    expect(body.goneAfterDelete).toBe(true);
  }, 90_000);

  it("honour a session's commandTimeoutMs", async () => {
    const body = await sdk().run("exec-timeout", "bounded");
    expect(body.boundedError).toBe(
      "CommandError: Failed to execute command 'sleep 30' in session 'bounded': Command timeout after 400ms",
    );
    expect(body.boundedElapsed).toBeLessThan(20_000);
    // As in the published container's session shell, the next command queues behind the one still running.
    expect(body.queued).toBe(
      "CommandError: Failed to execute command 'echo quick' in session 'bounded': Command timeout after 400ms",
    );
  }, 90_000);
});
