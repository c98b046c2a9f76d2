import Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type LocalControlPlane, startLocalControlPlane } from "../src/index.js";
import { claimOne, sdkClient } from "./helpers.js";

describe("query parameters as the SDK serialises them", () => {
  let plane: LocalControlPlane;
  let environment: { id: string; environmentKey: string };
  beforeEach(async () => {
    plane = await startLocalControlPlane();
    environment = plane.createEnvironment();
  });
  afterEach(() => plane.stop());

  /** A session whose one-call turn was answered, so its history holds both kinds of events. */
  const answeredSession = async () => {
    const session = plane.createSession({ environmentId: environment.id });
    plane.queueTurn(session.id, { toolCalls: [{ name: "glob", input: { pattern: "*" } }] });
    const client = sdkClient(plane.url, environment.environmentKey);
    const [call] = (
      await client.beta.sessions.events.list(session.id, { types: ["agent.tool_use"] })
    ).data;
    await client.beta.sessions.events.send(session.id, {
      events: [
        {
          type: "user.tool_result",
          tool_use_id: call!.id,
          content: [{ type: "text", text: "none" }],
        },
      ],
    });
    return { session, client };
  };

  it("filters the history by repeated types[] keys", async () => {
    const { session, client } = await answeredSession();
    const page = await client.beta.sessions.events.list(session.id, {
      limit: 1000,
      types: ["agent.tool_use", "user.tool_result", "session.status_idle"],
    });
    expect(page.data.map((event) => event.type)).toEqual([
      "agent.tool_use",
      "user.tool_result",
      "session.status_idle",
    ]);
    const desc = await client.beta.sessions.events.list(session.id, {
      types: ["user.message", "session.status_running"],
      order: "desc",
    });
    expect(desc.data.map((event) => event.type)).toEqual([
      "session.status_running",
      "user.message",
    ]);
    const none = await client.beta.sessions.events.list(session.id, { types: ["agent.thinking"] });
    expect(none.data).toEqual([]);
  });

  it("filters the history by created_at ranges compared with processed_at", async () => {
    const { session, client } = await answeredSession();
    const all = (await client.beta.sessions.events.list(session.id)).data;
    const result = all.find((event) => event.type === "user.tool_result")!;
    const at = Date.parse(result.processed_at!);
    const later = all
      .filter((event) => Date.parse(event.processed_at!) > at)
      .map((event) => event.id);
    const fromResult = all
      .filter((event) => Date.parse(event.processed_at!) >= at)
      .map((event) => event.id);
    const gt = await client.beta.sessions.events.list(session.id, {
      "created_at[gt]": result.processed_at!,
    });
    expect(gt.data.map((event) => event.id)).toEqual(later);
    const gte = await client.beta.sessions.events.list(session.id, {
      "created_at[gte]": result.processed_at!,
    });
    expect(gte.data.map((event) => event.id)).toEqual(fromResult);
    expect(fromResult).toContain(result.id);
    const before = await client.beta.sessions.events.list(session.id, {
      "created_at[lt]": new Date(0).toISOString(),
    });
    expect(before.data).toEqual([]);
    const window = await client.beta.sessions.events.list(session.id, {
      "created_at[gte]": new Date(0).toISOString(),
      "created_at[lte]": new Date(Date.now() + 60_000).toISOString(),
      types: ["user.tool_result"],
    });
    expect(window.data.map((event) => event.id)).toEqual([result.id]);
  });

  it("refuses what the SDK's types do not allow, with a typed 400", async () => {
    const session = plane.createSession({ environmentId: environment.id });
    const get = (query: string) =>
      fetch(`${plane.url}/v1/sessions/${session.id}/events?${query}`, {
        headers: {
          authorization: `Bearer ${environment.environmentKey}`,
          "anthropic-beta": "managed-agents-2026-04-01",
        },
      });
    for (const query of [
      "types[]=agent.unknown",
      "created_at[gt]=yesterday",
      "created_at[between]=2026-01-01T00:00:00Z",
      "limit=1&limit=2",
      "types=agent.tool_use",
      "types=agent.tool_use&types[]=agent.tool_use",
      "order=up",
    ]) {
      const response = await get(query);
      expect({ query, status: response.status }).toEqual({ query, status: 400 });
      expect(await response.json()).toMatchObject({
        type: "error",
        error: { type: "invalid_request_error" },
      });
    }
    const client = sdkClient(plane.url, environment.environmentKey);
    const listing = client.beta.sessions.events.list(session.id, {
      // @ts-expect-error: not an event type
      types: ["agent.unknown"],
    });
    await expect(listing).rejects.toBeInstanceOf(Anthropic.BadRequestError);
  });

  it("streams with repeated event_deltas[] keys", async () => {
    const session = plane.createSession({ environmentId: environment.id });
    const client = sdkClient(plane.url, environment.environmentKey);
    const stream = await client.beta.sessions.events.stream(session.id, {
      event_deltas: ["agent.message", "agent.thinking"],
    });
    plane.queueTurn(session.id, { toolCalls: [], finalMessage: "hello" });
    const seen: string[] = [];
    for await (const event of stream) {
      seen.push(event.type);
      if (event.type === "session.status_idle") break;
    }
    expect(seen).toEqual([
      "user.message",
      "session.status_running",
      "agent.message",
      "session.status_idle",
    ]);
  });

  it("reads a null the SDK's types allow (sent as an empty value) as the parameter left out", async () => {
    plane.queueTurn(plane.createSession({ environmentId: environment.id }).id, { toolCalls: [] });
    const work = await claimOne(sdkClient(plane.url), environment.id, environment.environmentKey);
    const asEnvironment = sdkClient(plane.url, environment.environmentKey);
    const beat = await asEnvironment.beta.environments.work.heartbeat(work.id, {
      environment_id: environment.id,
      desired_ttl_seconds: null,
      expected_last_heartbeat: "NO_HEARTBEAT",
    });
    expect(beat).toMatchObject({ lease_extended: true, state: "active" });
    const listed = await asEnvironment.beta.environments.work.list(environment.id, { page: null });
    expect(listed.data.map((item) => item.id)).toEqual([work.id]);
    expect(
      await asEnvironment.beta.environments.work.poll(environment.id, {
        block_ms: null,
        reclaim_older_than_ms: null,
      }),
    ).toBeNull();
  });
});

describe("work.update (POST /v1/environments/{id}/work/{work_id})", () => {
  let plane: LocalControlPlane;
  beforeEach(async () => {
    plane = await startLocalControlPlane();
  });
  afterEach(() => plane.stop());

  it("merges a metadata patch for the API key: a string upserts, null deletes, an omitted field keeps", async () => {
    const environment = plane.createEnvironment();
    plane.queueTurn(plane.createSession({ environmentId: environment.id }).id, { toolCalls: [] });
    const work = await claimOne(sdkClient(plane.url), environment.id, environment.environmentKey);
    const operator = sdkClient(plane.url, plane.adminToken);
    const first = await operator.beta.environments.work.update(work.id, {
      environment_id: environment.id,
      metadata: { worker: "w-1", region: "local" },
    });
    expect(first).toMatchObject({
      id: work.id,
      type: "work",
      metadata: { worker: "w-1", region: "local" },
    });
    const second = await operator.beta.environments.work.update(work.id, {
      environment_id: environment.id,
      metadata: { worker: "w-2", region: null },
    });
    expect(second.metadata).toEqual({ worker: "w-2" });
    const retrieved = await operator.beta.environments.work.retrieve(work.id, {
      environment_id: environment.id,
    });
    expect(retrieved.metadata).toEqual({ worker: "w-2" });
    expect(retrieved.secret).toBeNull();
  });

  it("refuses the environment key, the item's secret, bad metadata and unknown items, changing nothing", async () => {
    const environment = plane.createEnvironment();
    plane.queueTurn(plane.createSession({ environmentId: environment.id }).id, { toolCalls: [] });
    const work = await claimOne(sdkClient(plane.url), environment.id, environment.environmentKey);
    const token = (
      JSON.parse(Buffer.from(work.secret!, "base64url").toString("utf8")) as {
        sessions_token: string;
      }
    ).sessions_token;
    const update = (client: Anthropic, metadata: Record<string, string | null>, workId = work.id) =>
      client.beta.environments.work
        .update(workId, { environment_id: environment.id, metadata })
        .catch((error: unknown) => error);
    expect(
      await update(sdkClient(plane.url, environment.environmentKey), { a: "b" }),
    ).toMatchObject({ status: 401 });
    expect(await update(sdkClient(plane.url, token), { a: "b" })).toMatchObject({ status: 401 });
    const operator = sdkClient(plane.url, plane.adminToken);
    expect(await update(operator, { ["k".repeat(65)]: "v" })).toBeInstanceOf(
      Anthropic.BadRequestError,
    );
    expect(await update(operator, { long: "v".repeat(513) })).toBeInstanceOf(
      Anthropic.BadRequestError,
    );
    expect(
      await update(
        operator,
        Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`key${index}`, "v"])),
      ),
    ).toBeInstanceOf(Anthropic.BadRequestError);
    expect(await update(operator, { a: "b" }, "work_missing")).toBeInstanceOf(
      Anthropic.NotFoundError,
    );
    expect(
      (await operator.beta.environments.work.retrieve(work.id, { environment_id: environment.id }))
        .metadata,
    ).toEqual({});
  });
});
