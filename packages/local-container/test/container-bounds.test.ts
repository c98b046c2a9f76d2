import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalContainerServer } from "../src/server/server.js";
import { type TestServer, startTestServer } from "./helpers.js";

/**
 * Memory and CPU bounds per container (`limits.maxContainerMemoryBytes`, `limits.maxContainerCpus`) through
 * the server: a memory hog is ended at the bound and the container and the server serve the next request.
 * Where the machine gives no memory or CPU cgroup, the server refuses to start with the typed error.
 */
const SESSIONLESS = "__DISABLE_SESSION__";
let harness: TestServer | undefined;
let refusal: unknown;

beforeAll(async () => {
  harness = await startTestServer({
    maxContainerMemoryBytes: 128 * 1024 * 1024,
    maxContainerCpus: 1,
  }).catch((error: unknown) => {
    refusal = error;
    return undefined;
  });
  await harness?.start("bounded");
});
afterAll(() => harness?.stop());

describe("per-container memory and CPU bounds", () => {
  it("ends a memory hog at the bound; the container and the server serve the next request", async () => {
    if (harness === undefined) {
      expect(ManagedRuntimeError.hasCode(refusal, "capability_unsupported")).toBe(true);
      return;
    }
    const hog = await harness.json("bounded", "POST", "/api/execute", {
      command:
        "node -e \"const a = []; for (let i = 0; i < 32; i++) { a.push(Buffer.alloc(16 * 1024 * 1024, 1)); process.stdout.write(i + ' '); } console.log('survived')\"",
      sessionId: SESSIONLESS,
    });
    expect(hog.status).toBe(200);
    expect(String(hog.body.stdout)).toMatch(/^0 1 /);
    expect(String(hog.body.stdout)).not.toContain("survived");
    expect(hog.body.exitCode).not.toBe(0);
    const next = await harness.json("bounded", "POST", "/api/execute", {
      command: "echo still-serving",
      sessionId: SESSIONLESS,
    });
    expect(next.body).toMatchObject({ stdout: "still-serving\n", exitCode: 0 });
    const written = await harness.json("bounded", "POST", "/api/write", {
      path: "/workspace/after.txt",
      content: "ok",
      sessionId: SESSIONLESS,
    });
    expect(written.body).toMatchObject({ success: true });
    await harness.start("another");
    expect(
      (
        await harness.json("another", "POST", "/api/execute", {
          command: "echo fresh",
          sessionId: SESSIONLESS,
        })
      ).body,
    ).toMatchObject({ stdout: "fresh\n" });
  }, 120_000);

  it("refuses a bound an unconfined server could not apply, naming the field", async () => {
    const error = await createLocalContainerServer({
      rootDir: "/tmp/never-created",
      confinement: "unconfined-unsafe",
      limits: { maxContainerMemoryBytes: 1024 * 1024 },
    }).catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(error, "invalid_config")).toBe(true);
    expect((error as ManagedRuntimeError).context).toMatchObject({
      field: "limits.maxContainerMemoryBytes",
    });
  });
});
