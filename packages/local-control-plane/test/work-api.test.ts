import Anthropic from "@anthropic-ai/sdk";
import { BetaHeartbeatPreconditionFailedError } from "@anthropic-ai/sdk/resources/beta/environments/work";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type LocalControlPlane, startLocalControlPlane, workSecretSchema } from "../src/index.js";
import { claimOne, sdkClient, tempDir } from "./helpers.js";

const decodeSecret = (secret: string | null) =>
  workSecretSchema.parse(JSON.parse(Buffer.from(secret ?? "", "base64url").toString("utf8")));

describe("the Work API through the SDK", () => {
  let plane: LocalControlPlane;
  let now: number;
  let environment: { id: string; environmentKey: string };
  let sessionId: string;
  let client: Anthropic;

  beforeEach(async () => {
    now = Date.parse("2026-01-01T00:00:00Z");
    plane = await startLocalControlPlane({ clock: () => now, defaultTtlSeconds: 30 });
    environment = plane.createEnvironment();
    sessionId = plane.createSession({ environmentId: environment.id }).id;
    plane.queueTurn(sessionId, { toolCalls: [{ name: "bash", input: { command: "true" } }] });
    client = sdkClient(plane.url);
  });
  afterEach(() => plane.stop());

  const asEnvironment = () => sdkClient(plane.url, environment.environmentKey);
  const asItem = (secret: string | null) =>
    sdkClient(plane.url, decodeSecret(secret).sessions_token);

  it("WorkPoller claims and acks the queued item; the poll alone carries the secret", async () => {
    const work = await claimOne(client, environment.id, environment.environmentKey);
    expect(work).toMatchObject({
      type: "work",
      environment_id: environment.id,
      data: { type: "session", id: sessionId },
      state: "queued",
      acknowledged_at: null,
    });
    const secret = decodeSecret(work.secret);
    expect(secret.sessions_token).toMatch(/^sk-ant-req-/);
    expect(secret.api_base_url).toBe(plane.url);
    const [stored] = plane.workItems(environment.id);
    expect(stored).toMatchObject({
      id: work.id,
      state: "starting",
      secret: null,
      acknowledged_at: new Date(now).toISOString(),
    });
    const retrieved = await sdkClient(plane.url).beta.environments.work.retrieve(
      work.id,
      { environment_id: environment.id },
      { headers: { "x-api-key": plane.adminToken } },
    );
    expect(retrieved).toMatchObject({ id: work.id, state: "starting", secret: null });
    expect(await asEnvironment().beta.environments.work.poll(environment.id)).toBeNull();
  });

  it("answers a stale expected_last_heartbeat with 412 heartbeat_precondition_failed and the server's lease", async () => {
    const work = await claimOne(client, environment.id, environment.environmentKey);
    const item = asItem(work.secret);
    const first = await item.beta.environments.work.heartbeat(work.id, {
      environment_id: environment.id,
      expected_last_heartbeat: "NO_HEARTBEAT",
      desired_ttl_seconds: 20,
    });
    expect(first).toMatchObject({
      type: "work_heartbeat",
      lease_extended: true,
      state: "active",
      ttl_seconds: 20,
    });
    const second = await item.beta.environments.work.heartbeat(work.id, {
      environment_id: environment.id,
      expected_last_heartbeat: first.last_heartbeat,
    });
    expect(second.last_heartbeat).not.toBe(first.last_heartbeat);

    const stale = await item.beta.environments.work
      .heartbeat(work.id, {
        environment_id: environment.id,
        expected_last_heartbeat: first.last_heartbeat,
      })
      .catch((error: unknown) => error);
    expect(stale).toBeInstanceOf(BetaHeartbeatPreconditionFailedError);
    expect(stale).toMatchObject({
      status: 412,
      errorCode: "heartbeat_precondition_failed",
      details: {
        error_code: "heartbeat_precondition_failed",
        current_state: {
          last_heartbeat: second.last_heartbeat,
          state: "active",
          ttl_seconds: 20,
          lease_extended: false,
        },
      },
    });
  });

  it("re-delivers an unacknowledged claim only after reclaim_older_than_ms", async () => {
    const worker = asEnvironment();
    const first = await worker.beta.environments.work.poll(environment.id, {
      reclaim_older_than_ms: 60_000,
    });
    expect(first?.id).toEqual(expect.any(String));
    expect(
      await worker.beta.environments.work.poll(environment.id, { reclaim_older_than_ms: 60_000 }),
    ).toBeNull();
    now += 60_000;
    const again = await worker.beta.environments.work.poll(environment.id, {
      reclaim_older_than_ms: 60_000,
    });
    expect(again?.id).toBe(first?.id);
  });

  it("returns an item whose lease expired to the queue with a new secret; the old holder is locked out", async () => {
    const work = await claimOne(client, environment.id, environment.environmentKey);
    const holder = asItem(work.secret);
    const beat = await holder.beta.environments.work.heartbeat(work.id, {
      environment_id: environment.id,
      expected_last_heartbeat: "NO_HEARTBEAT",
      desired_ttl_seconds: 5,
    });
    now += 4_000;
    expect(await asEnvironment().beta.environments.work.poll(environment.id)).toBeNull();
    now += 2_000;
    const reclaimed = await claimOne(client, environment.id, environment.environmentKey);
    expect(reclaimed.id).toBe(work.id);
    expect(decodeSecret(reclaimed.secret).sessions_token).not.toBe(
      decodeSecret(work.secret).sessions_token,
    );

    const oldToken = await holder.beta.environments.work
      .heartbeat(work.id, {
        environment_id: environment.id,
        expected_last_heartbeat: beat.last_heartbeat,
      })
      .catch((error: unknown) => error);
    expect(oldToken).toBeInstanceOf(Anthropic.AuthenticationError);
    const stale = await asEnvironment()
      .beta.environments.work.heartbeat(work.id, {
        environment_id: environment.id,
        expected_last_heartbeat: beat.last_heartbeat,
      })
      .catch((error: unknown) => error);
    expect(stale).toMatchObject({ status: 412, errorCode: "heartbeat_precondition_failed" });
    const fresh = await asItem(reclaimed.secret).beta.environments.work.heartbeat(work.id, {
      environment_id: environment.id,
      expected_last_heartbeat: "NO_HEARTBEAT",
    });
    expect(fresh.lease_extended).toBe(true);
  });

  it("an operator's graceful stop leaves the item stopping until its holder stops it; a second stop is a conflict", async () => {
    const work = await claimOne(client, environment.id, environment.environmentKey);
    const item = asItem(work.secret);
    const beat = await item.beta.environments.work.heartbeat(work.id, {
      environment_id: environment.id,
      expected_last_heartbeat: "NO_HEARTBEAT",
    });
    const operator = sdkClient(plane.url).withOptions({ apiKey: plane.adminToken });
    const stopping = await operator.beta.environments.work.stop(work.id, {
      environment_id: environment.id,
    });
    expect(stopping).toMatchObject({
      state: "stopping",
      stop_requested_at: expect.any(String),
      stopped_at: null,
    });
    // The precondition is not compared once the item is stopping; the lease is not extended.
    expect(
      await item.beta.environments.work.heartbeat(work.id, {
        environment_id: environment.id,
        expected_last_heartbeat: "bogus",
      }),
    ).toMatchObject({
      state: "stopping",
      lease_extended: false,
      last_heartbeat: beat.last_heartbeat,
    });
    expect(
      await item.beta.environments.work.stop(work.id, { environment_id: environment.id }),
    ).toMatchObject({ state: "stopped", stopped_at: expect.any(String) });
    const again = await item.beta.environments.work
      .stop(work.id, { environment_id: environment.id, force: true })
      .catch((error: unknown) => error);
    expect(again).toBeInstanceOf(Anthropic.ConflictError);
  });

  it("ends a stopping item when its lease expires", async () => {
    const work = await claimOne(client, environment.id, environment.environmentKey);
    await asItem(work.secret).beta.environments.work.heartbeat(work.id, {
      environment_id: environment.id,
      expected_last_heartbeat: "NO_HEARTBEAT",
      desired_ttl_seconds: 10,
    });
    await sdkClient(plane.url)
      .withOptions({ apiKey: plane.adminToken })
      .beta.environments.work.stop(work.id, { environment_id: environment.id });
    now += 11_000;
    expect(plane.workItems(environment.id)).toEqual([
      expect.objectContaining({ state: "stopped" }),
    ]);
  });

  it("hands an item to one of two concurrent polls, and wakes a blocked poll when work is queued", async () => {
    const worker = asEnvironment();
    const [a, b] = await Promise.all([
      worker.beta.environments.work.poll(environment.id, { block_ms: 500 }),
      worker.beta.environments.work.poll(environment.id, { block_ms: 500 }),
    ]);
    expect([a, b].filter((work) => work !== null)).toHaveLength(1);

    const waiting = worker.beta.environments.work.poll(environment.id, { block_ms: 999 });
    setTimeout(
      () =>
        plane.queueTurn(plane.createSession({ environmentId: environment.id }).id, {
          toolCalls: [],
        }),
      50,
    );
    expect(await waiting).toMatchObject({ data: { type: "session" }, state: "queued" });
  });

  it("lists the environment's work and reports queue stats", async () => {
    const worker = asEnvironment();
    expect(await worker.beta.environments.work.stats(environment.id)).toEqual({
      type: "work_queue_stats",
      depth: 1,
      pending: 0,
      oldest_queued_at: new Date(now).toISOString(),
      workers_polling: 0,
    });
    await claimOne(client, environment.id, environment.environmentKey);
    const listed = [];
    for await (const work of worker.beta.environments.work.list(environment.id)) listed.push(work);
    expect(listed).toEqual([expect.objectContaining({ state: "starting", secret: null })]);
    expect(await worker.beta.environments.work.stats(environment.id)).toMatchObject({
      depth: 0,
      pending: 0,
      workers_polling: 1,
    });
  });

  it("queues health checks, which a worker stops", async () => {
    const otherSession = plane.createSession({ environmentId: environment.id });
    expect(otherSession.id).not.toBe(sessionId);
    const { workId } = plane.queueHealthcheck(environment.id);
    await claimOne(client, environment.id, environment.environmentKey);
    const healthcheck = await claimOne(client, environment.id, environment.environmentKey);
    expect(healthcheck).toMatchObject({ id: workId, data: { type: "healthcheck" } });
    expect(
      await asEnvironment().beta.environments.work.stop(workId, { environment_id: environment.id }),
    ).toMatchObject({ state: "stopped" });
  });
});

describe("fault injection", () => {
  let plane: LocalControlPlane;
  beforeEach(async () => {
    // A 2 s lease makes the SDK's worker heartbeat every second.
    plane = await startLocalControlPlane({ defaultTtlSeconds: 2 });
  });
  afterEach(() => plane.stop());

  it("takeOverLease makes the SDK worker's next heartbeat stale: it ends with lease lost and does not stop the item", async () => {
    const environment = plane.createEnvironment();
    const session = plane.createSession({ environmentId: environment.id });
    plane.queueTurn(session.id, { toolCalls: [{ name: "bash", input: { command: "sleep 3" } }] });
    const client = sdkClient(plane.url);
    const work = await claimOne(client, environment.id, environment.environmentKey);
    const workdir = await tempDir();
    try {
      // The first beat claims the lease; the lease is then taken over, so the next beat is stale.
      const heartbeats: number[] = [];
      const observed = sdkClient(plane.url).withOptions({
        fetch: async (input, init) => {
          const response = await fetch(input, init);
          if (String(input).includes("/heartbeat")) heartbeats.push(response.status);
          return response;
        },
      });
      setTimeout(() => plane.takeOverLease(work.id), 200);
      await observed.beta.environments.work
        .worker({ workdir: workdir.path, maxIdleMs: 300 })
        .handleItem({
          workId: work.id,
          environmentId: environment.id,
          sessionId: session.id,
          workSecret: work.secret!,
        });
      expect(heartbeats.at(-1)).toBe(412);
      // The SDK releases a lost lease without stopping it: the item stays active under its new holder.
      expect(plane.workItems(environment.id)).toEqual([
        expect.objectContaining({ id: work.id, state: "active", stopped_at: null }),
      ]);
    } finally {
      await workdir.remove();
    }
  });

  it("expireLease returns a claimed item to the queue, as a crash between claim and run leaves it", async () => {
    const environment = plane.createEnvironment();
    plane.queueTurn(plane.createSession({ environmentId: environment.id }).id, { toolCalls: [] });
    const client = sdkClient(plane.url);
    const work = await claimOne(client, environment.id, environment.environmentKey);
    expect(plane.expireLease(work.id)).toMatchObject({ state: "queued", acknowledged_at: null });
    expect((await claimOne(client, environment.id, environment.environmentKey)).id).toBe(work.id);
    expect(() => plane.expireLease("work_missing")).toThrow(
      expect.objectContaining({ code: "not_found" }),
    );
  });
});
