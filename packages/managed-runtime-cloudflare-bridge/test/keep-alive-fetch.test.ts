import { createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { BRIDGE_IDLE_CONNECTION_MS, bridgeFetch } from "../src/wire/keep-alive-fetch.js";

describe("bridge fetch", () => {
  it("closes an idle connection itself, before a server that closes idle connections after 6 s", async () => {
    const server = createServer((_request, response) => response.end("ok"));
    // workerd closes idle connections after 5 s; this server waits a little longer, so the margin is generous.
    server.keepAliveTimeout = 6_000;
    const closedBy = new Promise<"client" | "server">((resolve) => {
      server.once("connection", (socket: Socket) => {
        let clientEnded = false;
        socket.once("end", () => (clientEnded = true));
        socket.once("close", () => resolve(clientEnded ? "client" : "server"));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const fetchImpl = bridgeFetch();
      const first = await fetchImpl(`http://127.0.0.1:${port}/a`);
      expect(await first.text()).toBe("ok");
      // The connection is reused while fresh...
      expect(await (await fetchImpl(`http://127.0.0.1:${port}/b`)).text()).toBe("ok");
      // ...and, once idle, closed by the client first: a request is never written on a socket the server is closing.
      expect(await closedBy).toBe("client");
      expect(BRIDGE_IDLE_CONNECTION_MS).toBeLessThan(5_000);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 30_000);
});
