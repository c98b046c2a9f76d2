import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestServer, parseDataFrames, startTestServer } from "./helpers.js";

/** The file helper each container runs inside its confinement: its bounds, its restarts, and what cannot stall it. */
const SESSIONLESS = "__DISABLE_SESSION__";
let harness: TestServer;

beforeAll(async () => {
  harness = await startTestServer({ maxFileBytes: 64 * 1024 });
  await harness.start("helper");
});
afterAll(() => harness.stop());

const post = (path: string, body: Record<string, unknown>) =>
  harness.json("helper", "POST", path, { sessionId: SESSIONLESS, ...body });
const exec = async (command: string): Promise<string> =>
  String((await post("/api/execute", { command })).body.stdout);

describe("the container's file helper", () => {
  it("writes with the container's own file size bound: past it, 413 FILE_TOO_LARGE", async () => {
    const fits = await post("/api/write", {
      path: "/workspace/fits.bin",
      content: Buffer.alloc(60 * 1024, 1).toString("base64"),
      encoding: "base64",
    });
    expect(fits.body).toMatchObject({ success: true });
    const tooLarge = await post("/api/write", {
      path: "/workspace/too-large.bin",
      content: Buffer.alloc(200 * 1024, 1).toString("base64"),
      encoding: "base64",
    });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toMatchObject({ code: "FILE_TOO_LARGE", operation: "file.write" });
  });

  it("runs inside the container, and a process there that kills it only costs the next route a restart", async () => {
    expect(
      (await post("/api/write", { path: "/workspace/before.txt", content: "before" })).body,
    ).toMatchObject({ success: true });
    // The helper is a process of the container's own PID namespace, found by its program text.
    const pids = (
      await exec(
        "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null | grep -q 'OMA_FILE_HELPE[R]' && echo ${p#/proc/}; done",
      )
    )
      .trim()
      .split("\n")
      .filter(Boolean);
    expect(pids.length).toBe(1);
    await exec(`kill -9 ${pids[0]}`);
    const after = await post("/api/read", { path: "/workspace/before.txt" });
    expect(after.body).toMatchObject({ success: true, content: "before" });
  });

  it("is not stalled by a FIFO: reads, streams and writes of one fail at once", async () => {
    await exec("mkfifo /workspace/pipe");
    const read = await post("/api/read", { path: "/workspace/pipe" });
    expect(read.status).toBeGreaterThanOrEqual(400);
    const stream = await harness.call("helper", "POST", "/api/read/stream", {
      path: "/workspace/pipe",
      sessionId: SESSIONLESS,
    });
    expect(parseDataFrames(await stream.text())).toEqual([
      { type: "error", error: "Not a regular file: /workspace/pipe" },
    ]);
    const write = await post("/api/write", { path: "/workspace/pipe", content: "x" });
    expect(write.status).toBeGreaterThanOrEqual(400);
    expect((await post("/api/exists", { path: "/workspace/pipe" })).body).toMatchObject({
      exists: true,
    });
  });
});
