/**
 * What the real SDK in workerd gets for the features the local container does not implement (the
 * deliberate differences docs/local-stack.md lists): each fails with an error, never a silent success.
 */
import { describe, expect, it } from "vitest";
import { useSdkHarness } from "./sdk-harness.js";

const sdk = useSdkHarness("fidelity-worker.ts");

describe("features the local container does not implement", () => {
  it("fail through the SDK with the errors docs/local-stack.md lists", async () => {
    const body = await sdk().run("unsupported");
    // Routes the server does not answer: the SDK raises its generic error with the server's 404 message.
    expect(body.git).toBe("SandboxError: No route POST /api/git/checkout");
    expect(body.watch).toBe("SandboxError: No route POST /api/watch");
    expect(body.codeContext).toBe("SandboxError: No route POST /api/contexts");
    // The PTY WebSocket (/ws/pty) is not served.
    expect(body.terminal).toBe("terminal answered 404: ");
    // Refused by the SDK itself before any container call, as on Cloudflare without the configuration.
    expect(body.mountBucket).toMatch(/^MissingCredentialsError: No credentials found/);
    expect(body.backup).toBe(
      "InvalidBackupConfigError: Backup not configured. Add a BACKUP_BUCKET R2 binding to your wrangler.jsonc.",
    );
    expect(body.tunnel).toBe(
      'sandbox.tunnels.* requires the RPC transport. Enable it with transport: "rpc" in sandbox options.',
    );
    // exposePort only records the preview token in the Durable Object; requests to the port fail (see docs).
    expect(body.exposePort).toBe("no error");
  }, 90_000);
});
