/** A command's stdin through the real SDK in workerd: at EOF unless the caller streams input, as on Cloudflare. */
import { describe, expect, it } from "vitest";
import { useSdkHarness } from "./sdk-harness.js";

const sdk = useSdkHarness("fidelity-worker.ts");

describe("stdin through the SDK", () => {
  it("is at EOF for exec, execStream and startProcess, so `cat` with no input returns", async () => {
    const body = await sdk().run("stdin");
    expect(body).toMatchObject({ exec: "done", exitCode: 0, processExit: 0 });
    expect(body.events).toEqual(["start:", "stdout:streamed\n", "complete:0"]);
  }, 90_000);
});
