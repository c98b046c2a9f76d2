import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index.js";
import { MAX_START_BODY_BYTES } from "../../src/http/work-request.js";
import { ORIGIN, TOKEN, call, newSessionId, shellProfile, testEnv } from "../support/api.js";

async function errorOf(
  response: Response,
): Promise<{ status: number; code: string; message: string }> {
  const body = (await response.json()) as { error: { code: string; message: string } };
  return { status: response.status, code: body.error.code, message: body.error.message };
}

function post(
  sessionId: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return call(`/v1/sessions/${sessionId}/work`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
}

async function countItems(sessionId: string): Promise<unknown> {
  return testEnv.DB.prepare("SELECT COUNT(*) AS count FROM work_items WHERE session_id = ?")
    .bind(sessionId)
    .first("count");
}

describe("request validation: typed errors, and nothing recorded", () => {
  it.each([
    ["a body that is not JSON", "{not json", 400, "invalid_request", "must be a JSON object"],
    ["a body without a profile", "{}", 400, "invalid_request", "at profile"],
    [
      "an unknown field",
      JSON.stringify({ profile: "hello", extra: 1 }),
      400,
      "invalid_request",
      "(root)",
    ],
    [
      "a malformed profile",
      JSON.stringify({ profile: { ...shellProfile("true"), driver: { type: "ama_worker" } } }),
      400,
      "invalid_request",
      "at profile",
    ],
    [
      "a work id with a slash",
      JSON.stringify({ workId: "a/b", profile: "hello" }),
      400,
      "invalid_request",
      "at workId",
    ],
    [
      "an unknown profile name",
      JSON.stringify({ profile: "no-such-profile" }),
      404,
      "not_found",
      'no profile named "no-such-profile"',
    ],
  ])("refuses %s", async (_case, body, status, code, message) => {
    const sessionId = newSessionId();
    expect(await errorOf(await post(sessionId, body))).toMatchObject({
      status,
      code,
      message: expect.stringContaining(message),
    });
    expect(await countItems(sessionId)).toBe(0);
  });

  it("refuses a body over the limit, declared or streamed", async () => {
    const sessionId = newSessionId();
    const oversize = JSON.stringify({
      profile: shellProfile(`echo ${"x".repeat(MAX_START_BODY_BYTES)}`),
    });
    expect(await errorOf(await post(sessionId, oversize))).toMatchObject({
      status: 413,
      code: "limit_exceeded",
    });
    // Without a Content-Length the body is counted as it streams.
    const bytes = new TextEncoder().encode(oversize);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let offset = 0; offset < bytes.byteLength; offset += 8192)
          controller.enqueue(bytes.slice(offset, offset + 8192));
        controller.close();
      },
    });
    const request = new Request(`${ORIGIN}/v1/sessions/${sessionId}/work`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}` },
      body: stream,
    });
    expect(request.headers.get("content-length")).toBeNull();
    expect(
      await errorOf(await worker.fetch(request, testEnv, createExecutionContext())),
    ).toMatchObject({ status: 413, code: "limit_exceeded" });
    expect(await countItems(sessionId)).toBe(0);
  });

  it("refuses malformed ids in the path", async () => {
    expect(
      await errorOf(await post("bad%20session", JSON.stringify({ profile: "hello" }))),
    ).toMatchObject({
      status: 400,
      code: "invalid_request",
      message: expect.stringContaining("sessionId"),
    });
    expect(await errorOf(await call("/v1/sessions/ok/work/.hidden"))).toMatchObject({
      status: 400,
      code: "invalid_request",
      message: expect.stringContaining("workId"),
    });
  });

  it("answers unknown items and routes with not_found, and a wrong method with 405", async () => {
    expect(await errorOf(await call(`/v1/sessions/${newSessionId()}/work/none`))).toMatchObject({
      status: 404,
      code: "not_found",
    });
    expect(await errorOf(await call("/v1/other"))).toMatchObject({
      status: 404,
      code: "not_found",
    });
    const wrongMethod = await call(`/v1/sessions/${newSessionId()}/work`, { method: "GET" });
    expect(wrongMethod.headers.get("allow")).toBe("POST");
    expect(await errorOf(wrongMethod)).toMatchObject({ status: 405, code: "invalid_request" });
  });

  it("reports a bad setting as invalid_config naming the variable, not its value", async () => {
    const env = { ...testEnv, PROFILES: { broken: { workspace: { requirement: "forever" } } } };
    const request = new Request(`${ORIGIN}/v1/sessions/s-1/work`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ profile: "broken" }),
    });
    const result = await errorOf(await worker.fetch(request, env, createExecutionContext()));
    expect(result).toMatchObject({
      status: 500,
      code: "invalid_config",
      message: expect.stringMatching(/^PROFILES\.broken/),
    });
    expect(result.message).not.toContain("forever");
  });
});
