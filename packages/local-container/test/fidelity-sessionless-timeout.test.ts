/** A sessionless exec past its timeout, as Cloudflare's container answers it: 200 with exit code 124. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestServer, startTestServer } from "./helpers.js";

let harness: TestServer;
beforeAll(async () => {
  harness = await startTestServer();
  await harness.start("timeouts");
});
afterAll(() => harness.stop());

describe("sessionless exec with a timeout", () => {
  it("answers 200 with exit code 124 and the output so far, and the command is gone", async () => {
    const { status, body } = await harness.json("timeouts", "POST", "/api/execute", {
      command: "echo started; sleep 30; echo never",
      sessionId: "__DISABLE_SESSION__",
      timeoutMs: 300,
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      success: false,
      exitCode: 124,
      stdout: "started\n",
      sessionId: "__DISABLE_SESSION__",
    });
    const after = await harness.json("timeouts", "POST", "/api/execute", {
      command: "pgrep -x sleep || echo none",
      sessionId: "__DISABLE_SESSION__",
    });
    expect(after.body.stdout).toBe("none\n");
  }, 60_000);

  it("leaves a command that ends in time alone", async () => {
    const { status, body } = await harness.json("timeouts", "POST", "/api/execute", {
      command: "echo quick",
      sessionId: "__DISABLE_SESSION__",
      timeoutMs: 20_000,
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, exitCode: 0, stdout: "quick\n" });
  }, 60_000);
});
