import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type TestServer, startTestServer } from "./helpers.js";

let harness: TestServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

/** Sends `GET /api/ping` on `socket` and resolves with the status line of the answer. */
function ping(socket: ReturnType<typeof connect>, token: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = "";
    const onData = (chunk: Buffer): void => {
      answer += chunk.toString("utf8");
      if (!answer.includes("pong")) return;
      socket.off("data", onData).off("close", onClose);
      resolve(answer.split("\r\n")[0] ?? "");
    };
    const onClose = (): void =>
      reject(new Error(`the server closed the connection (read ${JSON.stringify(answer)})`));
    socket.on("data", onData).once("close", onClose);
    socket.write(
      `GET /api/ping HTTP/1.1\r\nHost: container\r\nX-Oma-Control-Token: Bearer ${token}\r\nConnection: keep-alive\r\n\r\n`,
    );
  });
}

describe("keep-alive", () => {
  it("keeps an idle connection open longer than workerd's 5 s pool idle timeout, so workerd always closes first", async () => {
    harness = await startTestServer();
    const { port } = harness.server;
    const socket = connect(port, "127.0.0.1");
    try {
      await new Promise<void>((resolve, reject) =>
        socket.once("connect", resolve).once("error", reject),
      );
      expect(await ping(socket, harness.server.controlToken)).toBe("HTTP/1.1 200 OK");
      await new Promise((resolve) => setTimeout(resolve, 6_500));
      // With Node's default 5 s the server had closed this connection by now.
      expect(await ping(socket, harness.server.controlToken)).toBe("HTTP/1.1 200 OK");
    } finally {
      socket.destroy();
    }
  }, 30_000);
});
