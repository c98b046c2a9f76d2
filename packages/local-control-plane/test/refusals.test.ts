import Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type LocalControlPlane, startLocalControlPlane } from "../src/index.js";
import { claimOne, sdkClient } from "./helpers.js";

describe("credentials and malformed requests", () => {
  let plane: LocalControlPlane;
  let environment: { id: string; environmentKey: string };
  let sessionId: string;
  beforeEach(async () => {
    plane = await startLocalControlPlane();
    environment = plane.createEnvironment();
    sessionId = plane.createSession({ environmentId: environment.id }).id;
    plane.queueTurn(sessionId, { toolCalls: [{ name: "bash", input: { command: "true" } }] });
  });
  afterEach(() => plane.stop());

  const tokenOf = (secret: string | null) =>
    (
      JSON.parse(Buffer.from(secret ?? "", "base64url").toString("utf8")) as {
        sessions_token: string;
      }
    ).sessions_token;
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => null,
      (error: unknown) => error,
    );

  it("refuses a wrong credential with 401 in the platform's error shape, never echoing it", async () => {
    const wrong = "sk-ant-env-local-not-a-real-key";
    const refused = await failure(
      sdkClient(plane.url, wrong).beta.environments.work.poll(environment.id),
    );
    expect(refused).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(refused).toMatchObject({
      status: 401,
      type: "authentication_error",
      error: { type: "error", error: { type: "authentication_error" } },
    });
    expect(String((refused as Error).message)).not.toContain(wrong);
    expect(
      await failure(
        sdkClient(plane.url, "sk-ant-req-local-forged").beta.sessions.retrieve(sessionId),
      ),
    ).toBeInstanceOf(Anthropic.AuthenticationError);
  });

  it("keeps each credential to its routes: environment key, the item's sessions token, the API key", async () => {
    const work = await claimOne(sdkClient(plane.url), environment.id, environment.environmentKey);
    const item = sdkClient(plane.url, tokenOf(work.secret));
    // A sessions token cannot poll, and cannot read another session.
    expect(await failure(item.beta.environments.work.poll(environment.id))).toBeInstanceOf(
      Anthropic.AuthenticationError,
    );
    const other = plane.createSession({ environmentId: environment.id });
    expect(await failure(item.beta.sessions.retrieve(other.id))).toBeInstanceOf(
      Anthropic.AuthenticationError,
    );
    expect(await item.beta.sessions.retrieve(sessionId)).toMatchObject({
      id: sessionId,
      environment_id: environment.id,
      status: "running",
    });
    // Work retrieve takes the API key only.
    expect(
      await failure(
        sdkClient(plane.url, environment.environmentKey).beta.environments.work.retrieve(work.id, {
          environment_id: environment.id,
        }),
      ),
    ).toBeInstanceOf(Anthropic.AuthenticationError);
    // Another environment's key opens nothing here.
    const stranger = plane.createEnvironment();
    expect(
      await failure(
        sdkClient(plane.url, stranger.environmentKey).beta.environments.work.poll(environment.id),
      ),
    ).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(
      await failure(
        sdkClient(plane.url, stranger.environmentKey).beta.environments.work.heartbeat(work.id, {
          environment_id: environment.id,
        }),
      ),
    ).toBeInstanceOf(Anthropic.AuthenticationError);
    // Once the item is stopped, its token no longer reads the session.
    await item.beta.environments.work.stop(work.id, {
      environment_id: environment.id,
      force: true,
    });
    expect(await failure(item.beta.sessions.retrieve(sessionId))).toBeInstanceOf(
      Anthropic.AuthenticationError,
    );
  });

  it("answers malformed queries and bodies with a typed 400 that names the field", async () => {
    const worker = sdkClient(plane.url, environment.environmentKey);
    const longBlock = await failure(
      worker.beta.environments.work.poll(environment.id, { block_ms: 5000 }),
    );
    expect(longBlock).toBeInstanceOf(Anthropic.BadRequestError);
    expect(longBlock).toMatchObject({
      error: {
        error: { type: "invalid_request_error", details: { error_code: "invalid_request" } },
      },
    });
    expect((longBlock as Error).message).toContain("block_ms");

    const work = await claimOne(sdkClient(plane.url), environment.id, environment.environmentKey);
    const item = sdkClient(plane.url, tokenOf(work.secret));
    expect(
      await failure(
        item.beta.environments.work.heartbeat(work.id, {
          environment_id: environment.id,
          desired_ttl_seconds: -1,
        }),
      ),
    ).toBeInstanceOf(Anthropic.BadRequestError);
    // A tool result without its tool_use_id; an event type this stand-in does not take.
    const missing = await failure(
      item.beta.sessions.events.send(sessionId, {
        events: [{ type: "user.tool_result" } as never],
      }),
    );
    expect(missing).toBeInstanceOf(Anthropic.BadRequestError);
    expect((missing as Error).message).toContain("events.0");
    expect(
      await failure(
        item.beta.sessions.events.send(sessionId, {
          events: [{ type: "user.define_outcome", description: "x" } as never],
        }),
      ),
    ).toBeInstanceOf(Anthropic.BadRequestError);
    expect(
      await failure(
        item.beta.sessions.events.send(sessionId, {
          events: [{ type: "user.tool_result", tool_use_id: "sevt_unknown" }],
        }),
      ),
    ).toBeInstanceOf(Anthropic.BadRequestError);
    // Nothing was lost: the outstanding call is still unanswered.
    expect(plane.transcript(sessionId).entries).toEqual([
      expect.objectContaining({ name: "bash", result: null }),
    ]);
  });

  it("requires the Managed Agents beta header", async () => {
    const refused = await failure(
      sdkClient(plane.url, environment.environmentKey).get(
        `/v1/environments/${environment.id}/work/stats`,
      ),
    );
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect((refused as Error).message).toContain("managed-agents-2026-04-01");
  });

  it("answers an unknown route or environment with 404", async () => {
    expect(
      await failure(
        sdkClient(plane.url, environment.environmentKey).beta.environments.work.poll("env_missing"),
      ),
    ).toBeInstanceOf(Anthropic.NotFoundError);
    expect(
      await failure(sdkClient(plane.url, environment.environmentKey).get("/v1/nothing-here")),
    ).toBeInstanceOf(Anthropic.NotFoundError);
  });

  it("validates its options once, at start", async () => {
    await expect(startLocalControlPlane({ defaultTtlSeconds: 0 })).rejects.toMatchObject({
      code: "invalid_config",
      message: expect.stringContaining("defaultTtlSeconds"),
    });
    await expect(
      startLocalControlPlane({ webhook: { url: "http://127.0.0.1:1/hook", secret: "not-whsec" } }),
    ).rejects.toMatchObject({ code: "invalid_config" });
    await expect(startLocalControlPlane({ unknown: true } as never)).rejects.toMatchObject({
      code: "invalid_config",
    });
  });

  it("throws typed errors from the programmatic API", () => {
    expect(() => plane.createSession({ environmentId: "env_missing" })).toThrow(
      expect.objectContaining({ code: "not_found" }),
    );
    expect(() => plane.queueTurn("sesn_missing", { toolCalls: [] })).toThrow(
      expect.objectContaining({ code: "not_found" }),
    );
  });
});
