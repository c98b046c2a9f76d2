import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestServer, maskTimestamps, startTestServer, authorizedFetch } from "./helpers.js";

const SESSIONLESS = "__DISABLE_SESSION__";
let harness: TestServer;

beforeAll(async () => {
  harness = await startTestServer();
  await harness.start("wire");
});
afterAll(() => harness.stop());

describe("the two exchanges recorded byte for byte", () => {
  it("streams a bridge exec exactly as the published control server does", async () => {
    const response = await harness.call(
      "wire",
      "POST",
      "/api/execute/stream",
      `{"command":"sh -c $'echo hi; echo err >&2; exit 3'","sessionId":"${SESSIONLESS}"}`,
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(response.headers.get("cache-control")).toBe("no-cache");
    expect(maskTimestamps(await response.text())).toBe(
      'data: {"type":"start","command":"sh -c $\'echo hi; echo err >&2; exit 3\'","timestamp":"<ts>"}\n\n' +
        'data: {"type":"stdout","data":"hi\\n","timestamp":"<ts>"}\n\n' +
        'data: {"type":"stderr","data":"err\\n","timestamp":"<ts>"}\n\n' +
        'data: {"type":"complete","exitCode":3,"timestamp":"<ts>"}\n\n',
    );
  });

  it("streams a small text file exactly as the published control server does", async () => {
    await harness.json("wire", "POST", "/api/write", {
      path: "/workspace/cap/small.txt",
      content: "hello bridge\n",
      sessionId: SESSIONLESS,
    });
    const response = await harness.call(
      "wire",
      "POST",
      "/api/read/stream",
      `{"path":"/workspace/cap/small.txt","sessionId":"${SESSIONLESS}"}`,
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(await response.text()).toBe(
      'data: {"type":"metadata","mimeType":"text/plain","size":13,"isBinary":false,"encoding":"utf-8"}\n\n' +
        'data: {"type":"chunk","data":"hello bridge\\n"}\n\n' +
        'data: {"type":"complete","bytesRead":13}\n\n',
    );
  });
});

describe("facts that hold for every call", () => {
  it("answers the readiness probe, ping and version without a container header", async () => {
    const probe = await authorizedFetch(harness.server, `${harness.server.url}/`);
    expect(probe.status).toBe(200);
    expect(probe.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await probe.text()).toBe("ready");
    const ping = (await (
      await authorizedFetch(harness.server, `${harness.server.url}/api/ping`)
    ).json()) as Record<string, unknown>;
    expect(ping).toMatchObject({ success: true, message: "pong" });
    const version = (await (
      await authorizedFetch(harness.server, `${harness.server.url}/api/version`)
    ).json()) as Record<string, unknown>;
    expect(version).toMatchObject({ success: true, version: "unknown" });
    expect(typeof version.timestamp).toBe("string");
  });

  it("sends the doubled CORS headers and a Content-Length on JSON", async () => {
    const response = await harness.call("wire", "POST", "/api/exists", {
      path: "/workspace",
      sessionId: SESSIONLESS,
    });
    expect(response.headers.get("access-control-allow-origin")).toBe("*, *");
    expect(response.headers.get("access-control-allow-methods")).toBe(
      "GET, POST, PUT, DELETE, OPTIONS, GET, POST, PUT, DELETE, OPTIONS",
    );
    expect(response.headers.get("access-control-allow-headers")).toBe(
      "Content-Type, Authorization, X-Session-Id, X-Sandbox-Id, X-Trace-Id, Content-Type, Authorization, X-Session-Id, X-Sandbox-Id, X-Trace-Id",
    );
    const text = await response.text();
    expect(response.headers.get("content-length")).toBe(String(Buffer.byteLength(text)));
    const preflight = await authorizedFetch(harness.server, `${harness.server.url}/api/execute`, {
      method: "OPTIONS",
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*, *");
  });

  it("answers errors as {code, message, context, httpStatus, timestamp} with no success member", async () => {
    const { status, body } = await harness.json("wire", "POST", "/api/read", {
      path: "/workspace/cap/missing.txt",
      sessionId: SESSIONLESS,
    });
    expect(status).toBe(404);
    expect(body).toMatchObject({
      code: "FILE_NOT_FOUND",
      message: "File not found: /workspace/cap/missing.txt",
      context: { path: "/workspace/cap/missing.txt", operation: "file.read" },
      operation: "file.read",
      httpStatus: 404,
    });
    expect(typeof body.timestamp).toBe("string");
    expect(typeof body.suggestion).toBe("string");
    expect(body).not.toHaveProperty("success");
  });

  it("refuses calls without a container header, for unknown containers and for unknown routes", async () => {
    const noHeader = await authorizedFetch(harness.server, `${harness.server.url}/api/execute`, {
      method: "POST",
      body: "{}",
    });
    expect(noHeader.status).toBe(400);
    expect(((await noHeader.json()) as Record<string, unknown>).code).toBe("CONTAINER_ID_REQUIRED");
    const unknown = await harness.call("never-started", "POST", "/api/execute", {
      command: "true",
      sessionId: SESSIONLESS,
    });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("x-oma-container-state")).toBe("missing");
    expect(((await unknown.json()) as Record<string, unknown>).code).toBe("CONTAINER_NOT_FOUND");
    const badId = await harness.call("../escape", "POST", "/api/execute", { command: "true" });
    expect(badId.status).toBe(404);
    const route = await harness.json("wire", "POST", "/api/nope", {});
    expect(route.status).toBe(404);
    expect(route.body.code).toBe("NOT_FOUND");
  });

  it("rejects malformed and mismatched bodies with 400 VALIDATION_FAILED", async () => {
    const malformed = await harness.json("wire", "POST", "/api/execute", "{not json");
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("VALIDATION_FAILED");
    const mismatched = await harness.json("wire", "POST", "/api/write", {
      path: "/workspace/x",
      content: 42,
    });
    expect(mismatched.status).toBe(400);
    expect(mismatched.body).toMatchObject({
      code: "VALIDATION_FAILED",
      context: { field: "content" },
    });
  });
});
