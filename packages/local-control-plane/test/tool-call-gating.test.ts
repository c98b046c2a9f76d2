import { access, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type LocalControlPlane, startLocalControlPlane } from "../src/index.js";
import { claimOne, sdkClient, tempDir } from "./helpers.js";

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe("which tool calls the SDK's handleItem() runs: permission evaluation and requires_action idles", () => {
  let plane: LocalControlPlane;
  let environment: { id: string; environmentKey: string };
  let workdir: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    plane = await startLocalControlPlane();
    environment = plane.createEnvironment();
    workdir = await tempDir();
  });
  afterEach(async () => {
    await plane.stop();
    await workdir.remove();
  });

  const runItem = async (sessionId: string, work: { id: string; secret?: string | null }) => {
    const client = sdkClient(plane.url);
    await client.beta.environments.work
      .worker({ workdir: workdir.path, maxIdleMs: 300 })
      .handleItem({
        workId: work.id,
        environmentId: environment.id,
        sessionId,
        workSecret: work.secret!,
      });
  };
  const history = async (sessionId: string) =>
    (
      await sdkClient(plane.url, environment.environmentKey).beta.sessions.events.list(sessionId, {
        limit: 1000,
      })
    ).data;

  it("runs a requires_action turn: each call goes out without a verdict and an idle lists it until it is answered", async () => {
    const session = plane.createSession({ environmentId: environment.id });
    const turn = plane.queueTurn(session.id, {
      gate: "requires_action",
      toolCalls: [
        { name: "bash", input: { command: "echo first > first.txt" } },
        { name: "read", input: { file_path: "first.txt" } },
      ],
      finalMessage: "read it",
    });
    expect(turn.gate).toBe("requires_action");
    const work = await claimOne(sdkClient(plane.url), environment.id, environment.environmentKey);
    await runItem(session.id, work);

    expect(await readFile(join(workdir.path, "first.txt"), "utf8")).toBe("first\n");
    const transcript = plane.transcript(session.id);
    expect(
      transcript.entries.map((entry) => [entry.name, entry.permission, entry.result?.is_error]),
    ).toEqual([
      ["bash", "allow", false],
      ["read", "allow", false],
    ]);
    expect(JSON.stringify(transcript.entries[1]!.result?.content)).toContain("first");
    const events = await history(session.id);
    const calls = events.filter((event) => event.type === "agent.tool_use");
    expect(calls.every((call) => !("evaluated_permission" in call))).toBe(true);
    const idles = events
      .filter((event) => event.type === "session.status_idle")
      .map((event) => event.stop_reason);
    expect(idles).toEqual([
      { type: "requires_action", event_ids: [calls[0]!.id] },
      { type: "requires_action", event_ids: [calls[1]!.id] },
      { type: "end_turn" },
    ]);
    expect(events.map((event) => event.type)).toEqual([
      "user.message",
      "session.status_running",
      "agent.tool_use",
      "session.status_idle",
      "user.tool_result",
      "session.status_running",
      "agent.tool_use",
      "session.status_idle",
      "user.tool_result",
      "session.status_running",
      "agent.message",
      "session.status_idle",
    ]);
    expect(plane.workItems(environment.id)).toEqual([
      expect.objectContaining({ id: work.id, state: "stopped" }),
    ]);
  });

  it("runs a turn whose first call is denied: the worker neither runs nor answers it, and the allowed call runs", async () => {
    const session = plane.createSession({ environmentId: environment.id });
    plane.queueTurn(session.id, {
      toolCalls: [
        { name: "bash", input: { command: "echo no > denied.txt" }, permission: "deny" },
        { name: "bash", input: { command: "echo yes > allowed.txt" } },
      ],
    });
    const work = await claimOne(sdkClient(plane.url), environment.id, environment.environmentKey);
    await runItem(session.id, work);

    expect(await exists(join(workdir.path, "denied.txt"))).toBe(false);
    expect(await readFile(join(workdir.path, "allowed.txt"), "utf8")).toBe("yes\n");
    const transcript = plane.transcript(session.id);
    expect(transcript.entries.map((entry) => [entry.permission, entry.result === null])).toEqual([
      ["deny", true],
      ["allow", false],
    ]);
    const events = await history(session.id);
    const calls = events.filter((event) => event.type === "agent.tool_use");
    expect(calls.map((call) => call.evaluated_permission)).toEqual(["deny", "allow"]);
    const answered = events.flatMap((event) =>
      event.type === "user.tool_result" ? [event.tool_use_id] : [],
    );
    expect(answered).toEqual([calls[1]!.id]);
    expect(transcript.status).toBe("idle");
  });

  it("lets a first heartbeat claim a polled item before its ack, as handleItem() starts with one", async () => {
    const session = plane.createSession({ environmentId: environment.id });
    plane.queueTurn(session.id, {
      toolCalls: [{ name: "bash", input: { command: "echo claimed > claimed.txt" } }],
    });
    const work = await sdkClient(plane.url, environment.environmentKey).beta.environments.work.poll(
      environment.id,
      { block_ms: 999 },
    );
    expect(work).toMatchObject({ state: "queued", acknowledged_at: null });
    await runItem(session.id, work!);
    expect(await readFile(join(workdir.path, "claimed.txt"), "utf8")).toBe("claimed\n");
    expect(plane.workItems(environment.id)).toEqual([
      expect.objectContaining({
        id: work!.id,
        state: "stopped",
        acknowledged_at: expect.any(String),
      }),
    ]);
  });
});
