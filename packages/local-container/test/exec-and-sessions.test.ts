import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type TestServer,
  hostPidOf,
  isAlive,
  parseDataFrames,
  startTestServer,
  waitFor,
  authorizedFetch,
} from "./helpers.js";

const SESSIONLESS = "__DISABLE_SESSION__";
let harness: TestServer;

beforeAll(async () => {
  harness = await startTestServer();
  await harness.start("exec", { STARTED_WITH: "container-env" });
});
afterAll(() => harness.stop());

const execute = (body: Record<string, unknown>) =>
  harness.json("exec", "POST", "/api/execute", body);

describe("/api/execute", () => {
  it("keeps the trailing newline sessionless and reports the exec result shape", async () => {
    const { status, body } = await execute({
      command: "echo hi; echo oops >&2; exit 2",
      sessionId: SESSIONLESS,
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      success: false,
      exitCode: 2,
      stdout: "hi\n",
      stderr: "oops\n",
      command: "echo hi; echo oops >&2; exit 2",
      sessionId: SESSIONLESS,
    });
    expect(typeof body.duration).toBe("number");
    expect(typeof body.timestamp).toBe("string");
  });

  it("runs in /workspace with the container's start env and never the server's own env", async () => {
    process.env.OMA_TEST_SERVER_SECRET = "do-not-leak";
    const { body } = await execute({
      command: 'pwd; echo "$STARTED_WITH"; echo "${OMA_TEST_SERVER_SECRET:-absent}"',
      sessionId: SESSIONLESS,
    });
    expect(body.stdout).toBe("/workspace\ncontainer-env\nabsent\n");
  });

  it("drops the trailing newline inside a session and keeps cwd and exported env between commands", async () => {
    await execute({
      command: "mkdir -p /workspace/sub && cd /workspace/sub && export KEPT=yes",
      sessionId: "s1",
    });
    const { body } = await execute({ command: 'pwd; echo "$KEPT"', sessionId: "s1" });
    expect(body).toMatchObject({
      success: true,
      exitCode: 0,
      stdout: "/workspace/sub\nyes",
      sessionId: "s1",
    });
    const other = await execute({ command: 'pwd; echo "${KEPT:-unset}"', sessionId: "s2" });
    expect(other.body.stdout).toBe("/workspace\nunset");
  });

  it("applies per-call cwd and env to that call only; what the command itself exports stays, as in the session shell", async () => {
    await execute({ command: "export BASE=session", sessionId: "s3" });
    const scoped = await execute({
      command: 'pwd; echo "$BASE-$EXTRA"; export LEAK=1',
      sessionId: "s3",
      cwd: "/tmp",
      env: { EXTRA: "call" },
    });
    expect(scoped.body.stdout).toBe("/tmp\nsession-call");
    const after = await execute({ command: 'pwd; echo "${EXTRA:-none}-$LEAK"', sessionId: "s3" });
    expect(after.body.stdout).toBe("/workspace\nnone-1");
  });

  it("answers 410 SESSION_TERMINATED when a session command runs exit, then starts the session afresh", async () => {
    await execute({ command: "cd /tmp && export GONE=1", sessionId: "s4" });
    const subshell = await execute({ command: "(exit 5)", sessionId: "s4" });
    expect(subshell.body).toMatchObject({ success: false, exitCode: 5 });
    const ended = await execute({ command: "exit 7", sessionId: "s4" });
    expect(ended.status).toBe(410);
    expect(ended.body).toMatchObject({
      code: "SESSION_TERMINATED",
      httpStatus: 410,
      context: { sessionId: "s4", exitCode: 7 },
    });
    const fresh = await execute({ command: 'pwd; echo "${GONE:-lost}"', sessionId: "s4" });
    expect(fresh.body.stdout).toBe("/workspace\nlost");
  });

  it("reports a missing cwd inside a session as a failed command", async () => {
    const { status, body } = await execute({
      command: "pwd",
      sessionId: "s5",
      cwd: "/workspace/does-not-exist",
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      success: false,
      exitCode: 1,
      stderr: "Failed to change directory to '/workspace/does-not-exist'",
    });
  });

  it("runs one session's commands one at a time and different sessions' commands at once", async () => {
    const span = { command: "date +%s%N; sleep 1; date +%s%N" };
    const interval = (body: Record<string, unknown>): [number, number] =>
      String(body.stdout).split("\n").map(Number) as [number, number];
    const overlap = ([a0, a1]: [number, number], [b0, b1]: [number, number]): boolean =>
      a0 < b1 && b0 < a1;
    const same = await Promise.all([
      execute({ ...span, sessionId: "one" }),
      execute({ ...span, sessionId: "one" }),
    ]);
    expect(overlap(interval(same[0].body), interval(same[1].body))).toBe(false);
    const apart = await Promise.all([
      execute({ ...span, sessionId: "left" }),
      execute({ ...span, sessionId: "right" }),
    ]);
    expect(overlap(interval(apart[0].body), interval(apart[1].body))).toBe(true);
  });

  it("keeps functions and plain variables in the session's shell, and a syntax error ends the shell as it does there", async () => {
    await execute({ command: 'twice() { echo "$1$1"; }; PLAIN=here', sessionId: "fn" });
    expect(
      (await execute({ command: 'twice ab; echo "$PLAIN"', sessionId: "fn" })).body.stdout,
    ).toBe("abab\nhere");
    const broken = await execute({ command: "if then fi", sessionId: "fn" });
    expect(broken).toMatchObject({
      status: 410,
      body: { code: "SESSION_TERMINATED", message: "Session 'fn' shell exited (exit code: 2)" },
    });
    expect(
      (await execute({ command: "type twice >/dev/null 2>&1 || echo gone", sessionId: "fn" })).body
        .stdout,
    ).toBe("gone");
  });
});

describe("/api/execute/stream", () => {
  it("answers 500 STREAM_START_ERROR as JSON when the command cannot start", async () => {
    const { status, body } = await harness.json("exec", "POST", "/api/execute/stream", {
      command: "pwd",
      sessionId: SESSIONLESS,
      cwd: "/workspace/nowhere",
    });
    expect(status).toBe(500);
    expect(body).toMatchObject({
      code: "STREAM_START_ERROR",
      httpStatus: 500,
      context: { command: "pwd" },
    });
    expect(String(body.message)).toContain(
      "Failed to execute streaming command 'pwd' in sessionless execution",
    );
  });

  it("ends a timed-out stream with a stderr note and exit code 124", async () => {
    const response = await harness.call("exec", "POST", "/api/execute/stream", {
      command: "echo before; sleep 20",
      sessionId: SESSIONLESS,
      timeoutMs: 400,
    });
    const frames = parseDataFrames(await response.text());
    expect(frames.map((frame) => frame.type)).toEqual(["start", "stdout", "stderr", "complete"]);
    expect(frames[2]?.data).toBe("Command timed out after 400ms\n");
    expect(frames[3]?.exitCode).toBe(124);
  });

  it("runs streamed commands in the session's state without carrying theirs back, and lists them as proc_ processes", async () => {
    await execute({ command: "cd /tmp && export STREAMED=1", sessionId: "st" });
    await harness
      .call("exec", "POST", "/api/execute/stream", {
        command: "cd / && export STREAMED=2",
        sessionId: "st",
      })
      .then((response) => response.text());
    const response = await harness.call("exec", "POST", "/api/execute/stream", {
      command: 'pwd; echo "$STREAMED"',
      sessionId: "st",
    });
    const output = parseDataFrames(await response.text())
      .filter((frame) => frame.type === "stdout")
      .map((frame) => frame.data)
      .join("");
    expect(output).toBe("/tmp\n1\n");
    const list = await harness.json("exec", "GET", "/api/process/list");
    const listed = (list.body.processes as { id: string; command: string; status: string }[]).find(
      (entry) => entry.command === 'pwd; echo "$STREAMED"',
    );
    expect(listed?.id).toMatch(/^proc_\d+_[0-9a-f]+$/);
    expect(listed?.status).toBe("completed");
  });

  it("kills the command when the client closes the stream", async () => {
    const aborted = new AbortController();
    const response = await authorizedFetch(
      harness.server,
      `${harness.server.url}/api/execute/stream`,
      {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Oma-Container-Id": "exec" },
        body: JSON.stringify({ command: "echo $$; sleep 60", sessionId: SESSIONLESS }),
        signal: aborted.signal,
      },
    );
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let text = "";
    while (!/"type":"stdout"[^\n]*\n\n/.test(text))
      text += new TextDecoder().decode((await reader.read()).value);
    const complete = text.slice(0, text.lastIndexOf("\n\n") + 2);
    const pid = hostPidOf(
      harness,
      "exec",
      Number(
        String(parseDataFrames(complete).find((frame) => frame.type === "stdout")?.data).trim(),
      ),
    );
    expect(isAlive(pid)).toBe(true);
    aborted.abort();
    expect(await waitFor(() => !isAlive(pid))).toBe(true);
  });

  it("completes, not hangs, when a session stream runs exit, and the session's shell lives on", async () => {
    await execute({ command: "export KEEP=kept", sessionId: "st2" });
    const response = await harness.call("exec", "POST", "/api/execute/stream", {
      command: "exit 3",
      sessionId: "st2",
    });
    const frames = parseDataFrames(await response.text());
    expect(frames.at(-1)).toMatchObject({ type: "complete", exitCode: 3 });
    expect((await execute({ command: 'echo "$KEEP"', sessionId: "st2" })).body.stdout).toBe("kept");
  });
});

describe("sessions", () => {
  it("creates with cwd and env, refuses a duplicate with 409, lists and deletes", async () => {
    const created = await harness.json("exec", "POST", "/api/session/create", {
      id: "made",
      cwd: "/tmp",
      env: { MADE: "here" },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      success: true,
      containerPlacementId: null,
      data: { id: "made" },
    });
    expect(JSON.stringify(created.body)).not.toContain("here");
    const duplicate = await harness.json("exec", "POST", "/api/session/create", {
      id: "made",
      cwd: "/tmp",
      env: {},
    });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body).toMatchObject({
      code: "SESSION_ALREADY_EXISTS",
      httpStatus: 409,
      context: { sessionId: "made", containerPlacementId: null },
    });
    const run = await execute({ command: 'pwd; echo "$MADE"', sessionId: "made" });
    expect(run.body.stdout).toBe("/tmp\nhere");
    const list = await harness.json("exec", "GET", "/api/session/list");
    expect(list.body.data).toContain("made");
    const deleted = await harness.json("exec", "POST", "/api/session/delete", {
      sessionId: "made",
    });
    expect(deleted.body).toMatchObject({ success: true, sessionId: "made" });
    const again = await harness.json("exec", "POST", "/api/session/delete", { sessionId: "made" });
    expect(again.status).toBe(404);
  });
});
