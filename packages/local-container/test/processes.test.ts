import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type TestServer,
  hostPidOf,
  isAlive,
  parseDataFrames,
  startTestServer,
  waitFor,
} from "./helpers.js";

const SESSIONLESS = "__DISABLE_SESSION__";
let harness: TestServer;

beforeAll(async () => {
  harness = await startTestServer();
  await harness.start("procs");
});
afterAll(() => harness.stop());

const start = (command: string, processId?: string) =>
  harness.json("procs", "POST", "/api/process/start", {
    command,
    sessionId: SESSIONLESS,
    ...(processId === undefined ? {} : { processId }),
  });

describe("background processes", () => {
  it("starts, lists, gets and returns logs of a finished process", async () => {
    const started = await start("echo out; echo err >&2", "job-1");
    expect(started.body).toMatchObject({
      success: true,
      processId: "job-1",
      command: "echo out; echo err >&2",
    });
    expect(typeof started.body.pid).toBe("number");
    await waitFor(
      async () =>
        (await harness.json("procs", "GET", "/api/process/job-1")).body.process !== undefined &&
        (
          (await harness.json("procs", "GET", "/api/process/job-1")).body.process as Record<
            string,
            unknown
          >
        ).status === "completed",
    );
    const got = await harness.json("procs", "GET", "/api/process/job-1");
    expect(got.body.process).toMatchObject({
      id: "job-1",
      status: "completed",
      exitCode: 0,
      command: "echo out; echo err >&2",
    });
    const logs = await harness.json("procs", "GET", "/api/process/job-1/logs");
    expect(logs.body).toMatchObject({
      success: true,
      processId: "job-1",
      stdout: "out\n",
      stderr: "err\n",
    });
    const list = await harness.json("procs", "GET", "/api/process/list");
    expect(
      (list.body.processes as Record<string, unknown>[]).some(
        (entry) => entry.id === "job-1" && entry.status === "completed",
      ),
    ).toBe(true);
  });

  it("streams the backlog, live output and a final exit frame", async () => {
    await start("echo first; sleep 0.4; echo second", "job-2");
    const response = await harness.call("procs", "GET", "/api/process/job-2/stream");
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const frames = parseDataFrames(await response.text());
    expect(frames[0]).toMatchObject({
      type: "process_info",
      processId: "job-2",
      command: "echo first; sleep 0.4; echo second",
    });
    const output = frames
      .filter((frame) => frame.type === "stdout")
      .map((frame) => frame.data)
      .join("");
    expect(output).toBe("first\nsecond\n");
    expect(frames.at(-1)).toMatchObject({ type: "exit", processId: "job-2", exitCode: 0 });
  });

  it("kills a process group with SIGTERM: status killed, exit code 143, children gone", async () => {
    const started = await start("sleep 60 & echo $! > /tmp/child.pid; wait", "job-3");
    await waitFor(
      async () =>
        (
          await harness.json("procs", "POST", "/api/exists", {
            path: "/tmp/child.pid",
            sessionId: SESSIONLESS,
          })
        ).body.exists === true,
    );
    const child = hostPidOf(
      harness,
      "procs",
      Number(
        (
          await harness.json("procs", "POST", "/api/read", {
            path: "/tmp/child.pid",
            sessionId: SESSIONLESS,
          })
        ).body.content,
      ),
    );
    expect(isAlive(child)).toBe(true);
    const killed = await harness.json("procs", "DELETE", "/api/process/job-3");
    expect(killed.body).toMatchObject({ success: true, processId: "job-3" });
    expect(await waitFor(() => !isAlive(child))).toBe(true);
    expect(
      await waitFor(
        async () =>
          (
            (await harness.json("procs", "GET", "/api/process/job-3")).body.process as Record<
              string,
              unknown
            >
          ).exitCode !== undefined,
      ),
    ).toBe(true);
    const got = await harness.json("procs", "GET", "/api/process/job-3");
    expect(got.body.process).toMatchObject({ status: "killed", exitCode: 143 });
    expect(isAlive(Number(started.body.pid))).toBe(false);
  });

  it("kill-all stops every running process and counts them", async () => {
    await start("sleep 60", "job-4");
    await start("sleep 60", "job-5");
    const result = await harness.json("procs", "DELETE", "/api/process/kill-all");
    expect(result.body).toMatchObject({ success: true, cleanedCount: 2 });
    // Each record settles when its own process has exited and closed its output; the two need not end in order.
    const ended = async (id: string) =>
      (
        (await harness.json("procs", "GET", `/api/process/${id}`)).body.process as Record<
          string,
          unknown
        >
      ).exitCode !== undefined;
    expect(await waitFor(async () => (await ended("job-4")) && (await ended("job-5")))).toBe(true);
    for (const id of ["job-4", "job-5"]) {
      expect((await harness.json("procs", "GET", `/api/process/${id}`)).body.process).toMatchObject(
        { status: "killed" },
      );
    }
  });

  it("killing a finished process, or kill-all, also kills what it left running in its group", async () => {
    // `env -u` drops the container's marker variable, so only the group signal can reach the sleeps.
    const leaveBehind = "env -u OMA_LOCAL_CONTAINER sleep 1000 >/dev/null 2>&1 & echo $!";
    await start(leaveBehind, "job-6");
    await start(leaveBehind, "job-7");
    const finished = async (id: string): Promise<number> => {
      await waitFor(
        async () =>
          (
            (await harness.json("procs", "GET", `/api/process/${id}`)).body.process as Record<
              string,
              unknown
            >
          ).status === "completed",
      );
      return hostPidOf(
        harness,
        "procs",
        Number(
          String(
            (await harness.json("procs", "GET", `/api/process/${id}/logs`)).body.stdout,
          ).trim(),
        ),
      );
    };
    const [first, second] = [await finished("job-6"), await finished("job-7")];
    expect([isAlive(first), isAlive(second)]).toEqual([true, true]);
    const killed = await harness.json("procs", "DELETE", "/api/process/job-6");
    expect(killed.body).toMatchObject({ success: true, processId: "job-6" });
    expect(await waitFor(() => !isAlive(first))).toBe(true);
    expect(isAlive(second)).toBe(true);
    // A finished process keeps its status: it completed before the kill.
    expect((await harness.json("procs", "GET", "/api/process/job-6")).body.process).toMatchObject({
      status: "completed",
      exitCode: 0,
    });
    const all = await harness.json("procs", "DELETE", "/api/process/kill-all");
    expect(all.body).toMatchObject({ success: true, cleanedCount: 0 });
    expect(await waitFor(() => !isAlive(second))).toBe(true);
  });

  it("answers 404 PROCESS_NOT_FOUND for unknown ids and 409 for a running duplicate id", async () => {
    const missing = await harness.json("procs", "GET", "/api/process/nope/logs");
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({
      code: "PROCESS_NOT_FOUND",
      context: { processId: "nope" },
    });
    await start("sleep 60", "dup");
    const duplicate = await start("sleep 60", "dup");
    expect(duplicate.status).toBe(409);
    await harness.json("procs", "DELETE", "/api/process/dup");
  });
});
