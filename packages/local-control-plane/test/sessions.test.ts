import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type LocalControlPlane, startLocalControlPlane } from "../src/index.js";
import { claimOne, sdkClient, tempDir } from "./helpers.js";

describe("sessions, events and turns through the SDK", () => {
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

  it("pages the event history in order and streams new events over SSE", async () => {
    const session = plane.createSession({ environmentId: environment.id });
    const client = sdkClient(plane.url, environment.environmentKey);
    const stream = await client.beta.sessions.events.stream(session.id);
    plane.queueTurn(session.id, {
      message: "hi",
      toolCalls: [{ name: "glob", input: { pattern: "*" } }],
    });

    const streamed: string[] = [];
    for await (const event of stream) {
      streamed.push(event.type);
      if (event.type === "agent.tool_use") {
        await client.beta.sessions.events.send(session.id, {
          events: [
            {
              type: "user.tool_result",
              tool_use_id: event.id,
              content: [{ type: "text", text: "no files" }],
            },
          ],
        });
      }
      if (event.type === "session.status_idle") break;
    }
    expect(streamed).toEqual([
      "user.message",
      "session.status_running",
      "agent.tool_use",
      "user.tool_result",
      "session.status_idle",
    ]);

    const paged: string[] = [];
    for await (const event of client.beta.sessions.events.list(session.id, { limit: 2 }))
      paged.push(event.type);
    expect(paged).toEqual(streamed);
    const newest = await client.beta.sessions.events.list(session.id, { limit: 1, order: "desc" });
    expect(newest.data.map((event) => event.type)).toEqual(["session.status_idle"]);
    expect(plane.transcript(session.id).entries).toEqual([
      expect.objectContaining({
        name: "glob",
        result: { content: [{ type: "text", text: "no files" }], is_error: false },
      }),
    ]);
  });

  it("serves a mounted file's content to the session's sessions token", async () => {
    const file = plane.uploadFile({
      filename: "input.csv",
      bytes: Buffer.from("a,b\n1,2\n"),
      mimeType: "text/csv",
    });
    const session = plane.createSession({
      environmentId: environment.id,
      files: [{ fileId: file.id, mountPath: "/workspace/input.csv" }],
    });
    plane.queueTurn(session.id, { toolCalls: [] });
    const work = await claimOne(sdkClient(plane.url), environment.id, environment.environmentKey);
    const token = (
      JSON.parse(Buffer.from(work.secret!, "base64url").toString("utf8")) as {
        sessions_token: string;
      }
    ).sessions_token;
    const item = sdkClient(plane.url, token);
    const retrieved = await item.beta.sessions.retrieve(session.id);
    expect(retrieved.resources).toEqual([
      expect.objectContaining({
        type: "file",
        file_id: file.id,
        mount_path: "/workspace/input.csv",
      }),
    ]);
    const content = await item.beta.files.download(file.id);
    expect(Buffer.from(await content.arrayBuffer()).toString("utf8")).toBe("a,b\n1,2\n");
    const other = plane.createSession({ environmentId: plane.createEnvironment().id });
    expect(other.id).toEqual(expect.any(String));
    await expect(
      sdkClient(plane.url, "sk-ant-req-local-forged").beta.files.download(file.id),
    ).rejects.toMatchObject({ status: 401 });
  });

  it("runs two turns queued back to back through EnvironmentWorker.run; the second reads what the first wrote", async () => {
    const session = plane.createSession({ environmentId: environment.id });
    const first = plane.queueTurn(session.id, {
      toolCalls: [
        { name: "bash", input: { command: "mkdir -p out && echo turn-one > out/one.txt" } },
        {
          name: "edit",
          input: {
            file_path: "out/one.txt",
            old_string: "turn-one",
            new_string: "turn-one-edited",
          },
        },
      ],
    });
    const second = plane.queueTurn(session.id, {
      toolCalls: [
        { name: "read", input: { file_path: "out/one.txt" } },
        { name: "grep", input: { pattern: "edited", path: "out" } },
      ],
    });
    expect([first.state, second.state]).toEqual(["running", "pending"]);

    const controller = new AbortController();
    const worker = sdkClient(plane.url).beta.environments.work.worker({
      environmentId: environment.id,
      environmentKey: environment.environmentKey,
      workdir: workdir.path,
      maxIdleMs: 300,
    });
    const running = worker.run(controller.signal).catch(() => undefined);
    try {
      await plane.waitForTurn(session.id, first.id);
      const done = await plane.waitForTurn(session.id, second.id);
      expect(done.work_ids).toHaveLength(1);
    } finally {
      controller.abort();
      await running;
    }
    expect(await readFile(join(workdir.path, "out/one.txt"), "utf8")).toBe("turn-one-edited\n");
    const entries = plane.transcript(session.id).entries;
    expect(entries.map((entry) => [entry.name, entry.result?.is_error])).toEqual([
      ["bash", false],
      ["edit", false],
      ["read", false],
      ["grep", false],
    ]);
    expect(JSON.stringify(entries[2]!.result)).toContain("turn-one-edited");
    expect(new Set(entries.map((entry) => entry.work_id)).size).toBe(2);
  });

  it("resumes an unfinished turn with a new work item when its item stops early", async () => {
    const session = plane.createSession({ environmentId: environment.id });
    const turn = plane.queueTurn(session.id, {
      toolCalls: [{ name: "bash", input: { command: "echo resumed > resumed.txt" } }],
    });
    const client = sdkClient(plane.url);
    const abandoned = await claimOne(client, environment.id, environment.environmentKey);
    await sdkClient(plane.url, environment.environmentKey).beta.environments.work.stop(
      abandoned.id,
      { environment_id: environment.id, force: true },
    );

    const resumed = await claimOne(client, environment.id, environment.environmentKey);
    expect(resumed.id).not.toBe(abandoned.id);
    await client.beta.environments.work
      .worker({ workdir: workdir.path, maxIdleMs: 300 })
      .handleItem({
        workId: resumed.id,
        environmentId: environment.id,
        sessionId: session.id,
        workSecret: resumed.secret!,
      });
    expect((await plane.waitForTurn(session.id, turn.id)).work_ids).toEqual([
      abandoned.id,
      resumed.id,
    ]);
    expect(await readFile(join(workdir.path, "resumed.txt"), "utf8")).toBe("resumed\n");
  });

  it("skips a terminated session's item, as the SDK's worker does", async () => {
    const session = plane.createSession({ environmentId: environment.id });
    plane.queueTurn(session.id, {
      toolCalls: [{ name: "bash", input: { command: "touch never" } }],
    });
    plane.terminateSession(session.id);
    const client = sdkClient(plane.url);
    const work = await claimOne(client, environment.id, environment.environmentKey);
    await client.beta.environments.work
      .worker({ workdir: workdir.path, maxIdleMs: 300 })
      .handleItem({
        workId: work.id,
        environmentId: environment.id,
        sessionId: session.id,
        workSecret: work.secret!,
      });
    expect(plane.transcript(session.id)).toMatchObject({
      status: "terminated",
      entries: [expect.objectContaining({ result: null })],
    });
    expect(plane.workItems(environment.id)).toEqual([
      expect.objectContaining({ state: "stopped" }),
    ]);
  });
});

describe("tool result sends", () => {
  it("answer a retried identical result with the stored event, and a different second result with 409", async () => {
    const plane = await startLocalControlPlane();
    try {
      const environment = plane.createEnvironment();
      const session = plane.createSession({ environmentId: environment.id });
      plane.queueTurn(session.id, {
        toolCalls: [
          { name: "bash", input: { command: "true" } },
          { name: "bash", input: { command: "true" } },
        ],
      });
      const client = sdkClient(plane.url, environment.environmentKey);
      const [toolUse] = (await client.beta.sessions.events.list(session.id)).data.filter(
        (event) => event.type === "agent.tool_use",
      );
      const result = {
        type: "user.tool_result" as const,
        tool_use_id: toolUse!.id,
        content: [{ type: "text" as const, text: "ok" }],
        is_error: false,
      };
      const first = await client.beta.sessions.events.send(session.id, { events: [result] });
      const retried = await client.beta.sessions.events.send(session.id, { events: [result] });
      expect(retried.data).toEqual(first.data);
      await expect(
        client.beta.sessions.events.send(session.id, {
          events: [{ ...result, content: [{ type: "text", text: "changed" }] }],
        }),
      ).rejects.toMatchObject({ status: 409 });
      // The retry advanced nothing: exactly one result, and the second call is outstanding.
      expect(
        plane.transcript(session.id).entries.map((entry) => entry.result?.content ?? null),
      ).toEqual([[{ type: "text", text: "ok" }], null]);
    } finally {
      await plane.stop();
    }
  });
});
