/**
 * The SDK's `websocket` transport: requests multiplexed over one WebSocket on `/ws`, answered by the same
 * routes as HTTP (`response` messages, and `stream` messages for SSE routes).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import {
  type TestServer,
  hostPidOf,
  isAlive,
  startTestServer,
  waitFor,
  controlHeaders,
} from "./helpers.js";

let harness: TestServer;
let socket: WebSocket;
const messages: Record<string, unknown>[] = [];

beforeAll(async () => {
  harness = await startTestServer();
  await harness.start("ws");
  socket = new WebSocket(`${harness.server.url.replace("http", "ws")}/ws`, {
    headers: { "X-Oma-Container-Id": "ws", ...controlHeaders(harness.server) },
  });
  socket.on("message", (data) =>
    messages.push(JSON.parse(String(data)) as Record<string, unknown>),
  );
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
});
afterAll(async () => {
  socket?.close();
  await harness.stop();
});

function request(id: string, method: string, path: string, body?: unknown): void {
  socket.send(
    JSON.stringify({ type: "request", id, method, path, ...(body === undefined ? {} : { body }) }),
  );
}

async function until(id: string): Promise<Record<string, unknown>[]> {
  await waitFor(
    () =>
      messages.some(
        (message) => message.id === id && (message.done === true || message.type === "error"),
      ),
    10_000,
  );
  return messages.filter((message) => message.id === id);
}

describe("websocket transport", () => {
  it("answers a plain route with one done response", async () => {
    request("r1", "POST", "/api/execute", {
      command: "echo over-ws",
      sessionId: "__DISABLE_SESSION__",
    });
    const [response] = await until("r1");
    expect(response).toMatchObject({
      type: "response",
      id: "r1",
      status: 200,
      done: true,
      body: { stdout: "over-ws\n", exitCode: 0 },
    });
    request("r2", "POST", "/api/read", {
      path: "/workspace/none",
      sessionId: "__DISABLE_SESSION__",
    });
    expect((await until("r2"))[0]).toMatchObject({ status: 404, body: { code: "FILE_NOT_FOUND" } });
  });

  it("relays an SSE route as stream messages, then a done response", async () => {
    request("s1", "POST", "/api/execute/stream", {
      command: "echo a; echo b >&2; exit 2",
      sessionId: "__DISABLE_SESSION__",
    });
    const received = await until("s1");
    const frames = received
      .filter((message) => message.type === "stream")
      .map((message) => JSON.parse(String(message.data)) as Record<string, unknown>);
    expect(frames.map((frame) => frame.type)).toEqual(["start", "stdout", "stderr", "complete"]);
    expect(frames[3]?.exitCode).toBe(2);
    expect(received.at(-1)).toMatchObject({ type: "response", status: 200, done: true });
  });

  it("cancel stops a streamed command, and malformed messages get an error", async () => {
    request("c1", "POST", "/api/execute/stream", {
      command: "echo $$; sleep 60",
      sessionId: "__DISABLE_SESSION__",
    });
    await waitFor(() =>
      messages.some((message) => message.id === "c1" && String(message.data).includes('"stdout"')),
    );
    const stdout = messages.find(
      (message) => message.id === "c1" && String(message.data).includes('"stdout"'),
    );
    const pid = hostPidOf(
      harness,
      "ws",
      Number(String((JSON.parse(String(stdout?.data)) as Record<string, unknown>).data).trim()),
    );
    expect(isAlive(pid)).toBe(true);
    socket.send(JSON.stringify({ type: "cancel", id: "c1" }));
    expect(await waitFor(() => !isAlive(pid))).toBe(true);
    socket.send("{nope");
    socket.send(JSON.stringify({ type: "request", id: "bad" }));
    await waitFor(() => messages.filter((message) => message.type === "error").length >= 2);
    expect(
      messages.filter((message) => message.type === "error").map((message) => message.code),
    ).toEqual(["PARSE_ERROR", "INVALID_REQUEST"]);
  });

  it("refuses an upgrade for a container the server does not have", async () => {
    const stranger = new WebSocket(`${harness.server.url.replace("http", "ws")}/ws`, {
      headers: { "X-Oma-Container-Id": "nobody", ...controlHeaders(harness.server) },
    });
    const failure = await new Promise<string>((resolve) => {
      stranger.once("unexpected-response", (_request, response) =>
        resolve(String(response.statusCode)),
      );
      stranger.once("error", (error) => resolve(error.message));
    });
    expect(failure).toContain("404");
  });
});
