/** Session shell state through the real SDK in workerd: one persistent shell per session, as on Cloudflare. */
import { describe, expect, it } from "vitest";
import { useSdkHarness } from "./sdk-harness.js";

const sdk = useSdkHarness("fidelity-worker.ts");

describe("session shell state through the SDK", () => {
  it("keeps functions, aliases, cwd, exported and plain variables from one exec to the next", async () => {
    const body = await sdk().run("shell-state");
    expect(body.fn).toBe("hello world");
    expect(body.alias).toBe("alias ll='ls -la'");
    expect(body.state).toBe("/workspace/deep\nyes\nplain");
    // Streamed and background commands see the session's state, as subshells of its shell do.
    expect(body.inStream).toBe("hello stream\n/workspace/deep\nplain\n");
    expect(body.processLogs).toBe("hello background\nyes\n");
    expect(body.isolated).toBe("isolated\n/workspace");
  }, 90_000);

  it("runs two execs of one session one after the other, never at once", async () => {
    const body = await sdk().run("shell-state", "concurrent");
    expect(body.overlapped).toBe(false);
  }, 90_000);
});
