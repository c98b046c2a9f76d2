/**
 * The same container behaviour when commands see container paths through literal rewriting (what a
 * non-root host gets) instead of a private mount namespace.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestServer, parseDataFrames, startTestServer } from "./helpers.js";

const SESSIONLESS = "__DISABLE_SESSION__";
let harness: TestServer;

beforeAll(async () => {
  // Outside /tmp, so a session's cwd (a host path in this mode) lies under no container mount point.
  harness = await startTestServer({}, "rewrite", "/var/tmp");
  await harness.start("rw");
});
afterAll(() => harness.stop());

describe("rewrite path mapping", () => {
  it("runs the bridge's persist commands against the container's own trees", async () => {
    await harness.json("rw", "POST", "/api/write", {
      path: "/workspace/a.txt",
      content: "alpha",
      sessionId: SESSIONLESS,
    });
    const tar = await harness.json("rw", "POST", "/api/execute", {
      command:
        "tar cf /tmp/sandbox-persist-1.tar -C /workspace . && tar tf /tmp/sandbox-persist-1.tar",
      sessionId: SESSIONLESS,
    });
    expect(tar.body).toMatchObject({ exitCode: 0 });
    expect(String(tar.body.stdout).split("\n")).toContain("./a.txt");
    const frames = parseDataFrames(
      await (
        await harness.call("rw", "POST", "/api/read/stream", {
          path: "/tmp/sandbox-persist-1.tar",
          sessionId: SESSIONLESS,
        })
      ).text(),
    );
    expect(frames[0]).toMatchObject({ type: "metadata", isBinary: true, size: 10_240 });
  });

  it("keeps a session's working directory and exported variables", async () => {
    await harness.json("rw", "POST", "/api/execute", {
      command: "mkdir -p /workspace/sub && cd /workspace/sub && export KEPT=1",
      sessionId: "s",
    });
    const run = await harness.json("rw", "POST", "/api/execute", {
      command: 'echo "$KEPT"; ls',
      sessionId: "s",
    });
    expect(run.body).toMatchObject({ exitCode: 0, stdout: "1" });
    await harness.json("rw", "POST", "/api/write", {
      path: "/workspace/sub/here.txt",
      content: "h",
      sessionId: SESSIONLESS,
    });
    expect(
      (await harness.json("rw", "POST", "/api/execute", { command: "ls", sessionId: "s" })).body
        .stdout,
    ).toBe("here.txt");
    const relative = await harness.json("rw", "POST", "/api/write", {
      path: "relative.txt",
      content: "r",
      sessionId: "s",
    });
    expect(relative.status).toBe(200);
    expect(
      (
        await harness.json("rw", "POST", "/api/execute", {
          command: "cat /workspace/sub/relative.txt",
          sessionId: SESSIONLESS,
        })
      ).body.stdout,
    ).toBe("r");
  });
});
