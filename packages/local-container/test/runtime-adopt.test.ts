/**
 * The shim's run state lives in one workerd process; containers outlive it. A runtime object created
 * after a restart must adopt a container the server still runs, or the Container class marks it stopped.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalContainerRuntime } from "../src/shim/local-runtime.js";
import { type TestServer, startTestServer } from "./helpers.js";

let harness: TestServer;
beforeAll(async () => {
  harness = await startTestServer({ maxContainers: 4 });
});
afterAll(() => harness.stop());

describe("adopting a running container", () => {
  it("reports a container the server still runs as running, and destroys it", async () => {
    // Started through the server, not through this runtime: this process has no run state for it, as after a restart.
    await harness.start("adopt-1");
    const runtime = createLocalContainerRuntime(harness.server.url, "adopt-1", {
      controlToken: harness.server.controlToken,
    });
    expect(runtime.running).toBe(false);
    await runtime.adopt();
    expect(runtime.running).toBe(true);
    await runtime.destroy();
    expect(harness.server.containers.get("adopt-1")).toBeUndefined();
  });

  it("leaves an unknown container not running", async () => {
    const runtime = createLocalContainerRuntime(harness.server.url, "adopt-missing", {
      controlToken: harness.server.controlToken,
    });
    await runtime.adopt();
    expect(runtime.running).toBe(false);
  });
});
