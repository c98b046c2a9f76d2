/**
 * Runs the real `@cloudflare/sandbox` 0.12.10 (the Sandbox Durable Object, `getSandbox` and `SandboxClient`)
 * in local workerd through Miniflare, with `@cloudflare/containers` replaced by the shim and the container
 * control API answered by the local container server. The SDK cannot be imported in plain Node.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "./helpers.js";
import { type SdkHarness, startSdkHarness } from "./sdk-harness.js";

let sdk: SdkHarness;
beforeAll(async () => {
  sdk = await startSdkHarness("sdk-worker.ts");
}, 60_000);
afterAll(() => sdk?.stop());

const run = (scenario: string): Promise<Record<string, unknown>> => sdk.run(scenario);

describe("the Sandbox SDK in workerd over the local container server", () => {
  it("getSandbox(env.Sandbox, name).exec('echo hi') works end to end", async () => {
    expect(await run("exec")).toEqual({ stdout: "hi", exitCode: 0, success: true });
    // The Durable Object started exactly one local container for the name.
    expect(sdk.harness.server.containers.list()).toHaveLength(1);
  });

  it("file operations, including the SDK's FileNotFoundError", async () => {
    expect(await run("files")).toEqual({
      content: "alpha",
      exists: true,
      names: ["b.txt"],
      gone: false,
      missing: "FileNotFoundError: File not found: /workspace/none.txt",
    });
  });

  it("setEnvVars reaches the default session and createSession applies its cwd and env", async () => {
    expect(await run("env")).toEqual({ fromDefault: "alpha", fromSession: "/tmp\nbeta" });
  });

  it("streams output through onOutput and execStream", async () => {
    const body = await run("stream");
    expect(body.chunks).toEqual(["stdout:one\n", "stderr:two\n"]);
    expect(body.exitCode).toBe(0);
    expect(body.events).toEqual(["start:", "stdout:three\n", "complete:4"]);
  });

  it("starts, lists, reads and kills a background process", async () => {
    expect(await run("process")).toEqual({ listed: true, stdout: "started\n" });
  });

  it("destroy() wipes the container on the server", async () => {
    const before = sdk.harness.server.containers.list().length;
    await run("destroy");
    expect(await waitFor(() => sdk.harness.server.containers.list().length === before)).toBe(true);
  });

  it("SandboxClient speaks to the server directly", async () => {
    await sdk.harness.server.containers.ensure("direct");
    expect(await run("client")).toEqual({
      pong: "pong",
      stdout: "direct\n",
      content: "via client",
    });
  });
});
