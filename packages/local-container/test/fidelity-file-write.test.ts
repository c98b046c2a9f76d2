/**
 * How a file write lands, as on Cloudflare's container server: it writes with `Bun.write`, which makes the file
 * full-length first and fills it afterwards, so a reader polling for the size sees a file of the right size
 * that still holds zeros. The local server does the same, with a pause between the two that a test can widen.
 */
import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FILL_DELAY_ENV } from "../src/server/options.js";
import { type TestServer, startTestServer } from "./helpers.js";

const SESSIONLESS = "__DISABLE_SESSION__";
const ID = "fidelity-write";
// Wide enough that the watcher below reads the tail before the fill on a loaded machine.
const FILL_DELAY_MS = 3000;
let harness: TestServer;

beforeAll(async () => {
  process.env[FILL_DELAY_ENV] = String(FILL_DELAY_MS);
  try {
    harness = await startTestServer();
  } finally {
    delete process.env[FILL_DELAY_ENV];
  }
  await harness.start(ID);
}, 60_000);
afterAll(() => harness?.stop());

const execute = (command: string) =>
  harness.json(ID, "POST", "/api/execute", { command, sessionId: SESSIONLESS });

describe("file writes land full-length first", () => {
  it("shows a watcher a file of its final size holding zeros, and the whole content once the write returned", async () => {
    const content = randomBytes(2 * 1024 * 1024 + 17);
    const size = content.byteLength;
    // Waits for the size, then reads the last KiB: what code that takes "has its size" for "is complete" reads.
    const watcher = execute(
      `while [ "$(stat -c %s /workspace/landing.bin 2>/dev/null)" != ${size} ]; do sleep 0.01; done; tail -c 1024 /workspace/landing.bin | tr -d '\\000' | wc -c`,
    );
    const written = await harness.json(ID, "POST", "/api/write", {
      path: "/workspace/landing.bin",
      content: content.toString("base64"),
      encoding: "base64",
      sessionId: SESSIONLESS,
    });
    expect(written.body).toMatchObject({ success: true });
    const seen = await watcher;
    expect(String(seen.body.stdout).trim()).toBe("0");
    const hashed = await execute("sha256sum /workspace/landing.bin");
    expect(String(hashed.body.stdout).slice(0, 64)).toBe(
      createHash("sha256").update(content).digest("hex"),
    );
  }, 60_000);

  it("writes an empty file as empty, with no pause", async () => {
    const written = await harness.json(ID, "POST", "/api/write", {
      path: "/workspace/empty.txt",
      content: "",
      sessionId: SESSIONLESS,
    });
    expect(written.body).toMatchObject({ success: true });
    expect(String((await execute("stat -c %s /workspace/empty.txt")).body.stdout).trim()).toBe("0");
  });

  it("refuses a fill delay that is not a whole number of milliseconds", async () => {
    process.env[FILL_DELAY_ENV] = "soon";
    try {
      await expect(startTestServer()).rejects.toMatchObject({ code: "invalid_config" });
    } finally {
      delete process.env[FILL_DELAY_ENV];
    }
  });
});
