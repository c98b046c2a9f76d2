/** The image's environment through the real SDK in workerd: what `cloudflare/sandbox:0.12.10` sets, in every command. */
import { describe, expect, it } from "vitest";
import { useSdkHarness } from "./sdk-harness.js";

const sdk = useSdkHarness("fidelity-worker.ts");

describe("the image's environment through the SDK", () => {
  it("sets SANDBOX_VERSION and the image's other variables in exec, sessions, streams and processes", async () => {
    const body = await sdk().run("image-env");
    expect(body.exec).toBe(
      [
        "SANDBOX_VERSION=0.12.10",
        "DEBIAN_FRONTEND=noninteractive",
        "PYTHON_POOL_MIN_SIZE=0",
        "JAVASCRIPT_POOL_MIN_SIZE=3",
        "TYPESCRIPT_POOL_MIN_SIZE=3",
        "LANG=C.UTF-8",
        "LC_ALL=C.UTF-8",
      ].join("\n"),
    );
    expect(body.inSession).toBe("0.12.10");
    expect(body.events).toEqual(["start:", "stdout:0.12.10\n", "complete:0"]);
    expect(body.process).toBe("0.12.10\n");
    expect(String(body.path).split(":")).toEqual(
      expect.arrayContaining([
        "/usr/local/sbin",
        "/usr/local/bin",
        "/usr/sbin",
        "/usr/bin",
        "/sbin",
        "/bin",
      ]),
    );
  }, 90_000);
});
