import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type LocalControlPlane, startLocalControlPlane } from "../src/index.js";
import { claimOne, sdkClient, tempDir } from "./helpers.js";

describe("the admin API over HTTP", () => {
  let plane: LocalControlPlane;
  beforeEach(async () => {
    plane = await startLocalControlPlane({ adminToken: "admin-token-for-tests-0123456789" });
  });
  afterEach(() => plane.stop());

  const admin = async (method: string, path: string, body?: unknown, token = plane.adminToken) => {
    const response = await fetch(`${plane.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined
        ? {}
        : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it("creates an environment, a session and a scripted turn that the SDK's worker runs; the transcript records it", async () => {
    const environment = await admin("POST", "/admin/v1/environments", { name: "admin-test" });
    expect(environment).toMatchObject({
      status: 201,
      body: {
        type: "environment",
        id: expect.stringMatching(/^env_/),
        environment_key: expect.stringMatching(/^sk-ant-env-/),
      },
    });
    const environmentId = environment.body.id as string;
    const session = await admin("POST", "/admin/v1/sessions", {
      environment_id: environmentId,
      title: "t",
    });
    expect(session).toMatchObject({
      status: 201,
      body: { type: "session", environment_id: environmentId, status: "idle", title: "t" },
    });
    const sessionId = session.body.id as string;
    const turn = await admin("POST", `/admin/v1/sessions/${sessionId}/turns`, {
      message: "list",
      tool_calls: [{ name: "bash", input: { command: "echo admin" } }],
      final_message: "listed",
    });
    expect(turn).toMatchObject({
      status: 201,
      body: {
        type: "turn",
        state: "running",
        tool_calls: 1,
        work_ids: [expect.stringMatching(/^work_/)],
      },
    });

    const workdir = await tempDir();
    try {
      const client = sdkClient(plane.url);
      const work = await claimOne(
        client,
        environmentId,
        environment.body.environment_key as string,
      );
      await client.beta.environments.work
        .worker({ workdir: workdir.path, maxIdleMs: 300 })
        .handleItem({ workId: work.id, environmentId, sessionId, workSecret: work.secret! });
    } finally {
      await workdir.remove();
    }
    const transcript = await admin("GET", `/admin/v1/sessions/${sessionId}/transcript`);
    expect(transcript).toMatchObject({
      status: 200,
      body: {
        session_id: sessionId,
        status: "idle",
        entries: [{ name: "bash", input: { command: "echo admin" }, result: { is_error: false } }],
      },
    });
    expect(JSON.stringify(transcript.body)).toContain("admin");
    const work = await admin("GET", `/admin/v1/work?environment_id=${environmentId}`);
    expect(work.body).toMatchObject({ data: [{ state: "stopped", secret: null }] });
  });

  it("refuses a wrong admin token with 401 {code, message} and the environment key too", async () => {
    const environment = plane.createEnvironment();
    expect(await admin("POST", "/admin/v1/environments", {}, "wrong-token")).toEqual({
      status: 401,
      body: { code: "unauthorized", message: "invalid credential" },
    });
    expect(
      (await admin("POST", "/admin/v1/environments", {}, environment.environmentKey)).status,
    ).toBe(401);
  });

  it("answers malformed bodies with a typed 400 naming the field, and unknown ids with 404", async () => {
    expect(await admin("POST", "/admin/v1/environments", "{not json")).toMatchObject({
      status: 400,
      body: { code: "invalid_request" },
    });
    const environment = plane.createEnvironment();
    const session = plane.createSession({ environmentId: environment.id });
    const badTool = await admin("POST", `/admin/v1/sessions/${session.id}/turns`, {
      tool_calls: [{ name: "web_fetch", input: {} }],
    });
    expect(badTool).toMatchObject({
      status: 400,
      body: { code: "invalid_request", message: expect.stringContaining("tool_calls.0.name") },
    });
    expect(
      await admin("POST", "/admin/v1/sessions", { environment_id: "env_missing" }),
    ).toMatchObject({ status: 404, body: { code: "not_found" } });
    expect(plane.transcript(session.id).entries).toEqual([]);
  });

  it("stops items and injects lease faults through /admin/v1/work/{id}/…", async () => {
    const environment = plane.createEnvironment();
    plane.queueTurn(plane.createSession({ environmentId: environment.id }).id, { toolCalls: [] });
    const work = await claimOne(sdkClient(plane.url), environment.id, environment.environmentKey);
    expect(await admin("POST", `/admin/v1/work/${work.id}/take-over-lease`, {})).toMatchObject({
      status: 200,
      body: { state: "active", latest_heartbeat_at: expect.any(String) },
    });
    expect(await admin("POST", `/admin/v1/work/${work.id}/expire-lease`, {})).toMatchObject({
      status: 200,
      body: { state: "queued" },
    });
    expect(await admin("POST", `/admin/v1/work/${work.id}/expire-lease`, {})).toMatchObject({
      status: 409,
      body: { code: "fence_conflict" },
    });
    expect(await admin("POST", `/admin/v1/work/${work.id}/stop`, { force: "yes" })).toMatchObject({
      status: 400,
      body: { code: "invalid_request" },
    });
    expect(await admin("POST", `/admin/v1/work/${work.id}/stop`, {})).toMatchObject({
      status: 200,
      body: { state: "stopped" },
    });
    expect(await admin("POST", "/admin/v1/work/work_missing/stop", {})).toMatchObject({
      status: 404,
      body: { code: "not_found" },
    });
  });

  it("scripts a turn's gate and each call's permission, and refuses values the model does not have", async () => {
    const environment = plane.createEnvironment();
    const session = plane.createSession({ environmentId: environment.id });
    const path = `/admin/v1/sessions/${session.id}/turns`;
    const calls = [
      { name: "bash", input: { command: "true" }, permission: "deny" },
      { name: "glob", input: { pattern: "*" } },
    ];
    expect(await admin("POST", path, { tool_calls: calls, gate: "ask" })).toMatchObject({
      status: 400,
      body: { code: "invalid_request" },
    });
    expect(
      await admin("POST", path, { tool_calls: [{ ...calls[0], permission: "ask" }] }),
    ).toMatchObject({ status: 400, body: { code: "invalid_request" } });
    expect(await admin("POST", path, { tool_calls: calls, gate: "requires_action" })).toMatchObject(
      { status: 201, body: { gate: "requires_action", tool_calls: 2 } },
    );
    const transcript = await admin("GET", `/admin/v1/sessions/${session.id}/transcript`);
    expect(transcript.body.entries).toEqual([
      expect.objectContaining({ name: "bash", permission: "deny", result: null }),
      expect.objectContaining({ name: "glob", permission: "allow", result: null }),
    ]);
  });

  it("uploads files and queues health checks", async () => {
    const upload = await fetch(`${plane.url}/admin/v1/files?filename=data.bin`, {
      method: "POST",
      headers: { authorization: `Bearer ${plane.adminToken}` },
      body: new Uint8Array([1, 2, 3]),
    });
    expect(await upload.json()).toMatchObject({
      type: "file",
      filename: "data.bin",
      size_bytes: 3,
    });
    const environment = plane.createEnvironment();
    expect(
      await admin("POST", `/admin/v1/environments/${environment.id}/healthchecks`, {}),
    ).toMatchObject({ status: 201, body: { data: { type: "healthcheck" }, state: "queued" } });
  });
});

describe("operator stops", () => {
  it("moves a held item to stopping, which the SDK's worker sees on its next heartbeat and ends", async () => {
    const plane = await startLocalControlPlane();
    const workdir = await tempDir();
    try {
      const environment = plane.createEnvironment();
      const session = plane.createSession({ environmentId: environment.id });
      plane.queueTurn(session.id, {
        toolCalls: [{ name: "bash", input: { command: "echo wound-down" } }],
      });
      const client = sdkClient(plane.url);
      const work = await claimOne(client, environment.id, environment.environmentKey);
      expect(plane.stopWork(work.id)).toMatchObject({
        state: "stopping",
        stop_requested_at: expect.any(String),
      });
      // The worker's first heartbeat sees `stopping` and winds down; its own force-stop ends the item.
      await client.beta.environments.work
        .worker({ workdir: workdir.path, maxIdleMs: 60_000 })
        .handleItem({
          workId: work.id,
          environmentId: environment.id,
          sessionId: session.id,
          workSecret: work.secret!,
        });
      expect(plane.workItems(environment.id)[0]).toMatchObject({ id: work.id, state: "stopped" });
    } finally {
      await plane.stop();
      await workdir.remove();
    }
  });
});
