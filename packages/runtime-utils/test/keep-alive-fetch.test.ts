import { createServer } from "node:http";
import { type AddressInfo, type Socket, createServer as createNetServer } from "node:net";
import { describe, expect, it } from "vitest";
import { createKeepAliveFetch } from "../src/node.js";

describe("createKeepAliveFetch", () => {
  it("reuses a connection while fresh, closes it itself once idle, and never cuts an answer that is slower than that", async () => {
    const server = createServer((request, response) => {
      if (request.url === "/slow") setTimeout(() => response.end("late"), 1_500);
      else response.end("ok");
    });
    server.keepAliveTimeout = 30_000;
    const sockets: Socket[] = [];
    const closedBy: ("client" | "server")[] = [];
    server.on("connection", (socket: Socket) => {
      sockets.push(socket);
      let clientEnded = false;
      socket.once("end", () => (clientEnded = true));
      socket.once("close", () => closedBy.push(clientEnded ? "client" : "server"));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const fetchImpl = createKeepAliveFetch({ idleConnectionMs: 500 });
      expect(await (await fetchImpl(`http://127.0.0.1:${port}/a`)).text()).toBe("ok");
      expect(await (await fetchImpl(`http://127.0.0.1:${port}/b`)).text()).toBe("ok");
      expect(sockets).toHaveLength(1);
      // Three times the idle time without a byte: a request waiting for its answer is not idle.
      expect(await (await fetchImpl(`http://127.0.0.1:${port}/slow`)).text()).toBe("late");
      await expect.poll(() => closedBy, { timeout: 10_000 }).toEqual(["client"]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 30_000);

  it("streams a request body with its length, and answers with the status, headers and body, or no body where there is none", async () => {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        if (request.url === "/empty") return response.writeHead(204).end();
        const body = Buffer.concat(chunks);
        response.writeHead(201, {
          "x-length": request.headers["content-length"] ?? "none",
          "x-encoding": request.headers["transfer-encoding"] ?? "none",
        });
        response.end(body.reverse());
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const fetchImpl = createKeepAliveFetch({ idleConnectionMs: 2_000 });
      const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, index) => index % 251));
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes.subarray(0, 100_000));
          controller.enqueue(bytes.subarray(100_000));
          controller.close();
        },
      });
      const response = await fetchImpl(`http://127.0.0.1:${port}/echo`, {
        method: "PUT",
        body,
        headers: { "content-length": String(bytes.byteLength) },
        duplex: "half",
      } as RequestInit);
      expect(response.status).toBe(201);
      expect(response.headers.get("x-length")).toBe("300000");
      expect(response.headers.get("x-encoding")).toBe("none");
      expect(Buffer.from(await response.arrayBuffer()).equals(Buffer.from(bytes).reverse())).toBe(
        true,
      );
      const empty = await fetchImpl(`http://127.0.0.1:${port}/empty`, {
        method: "POST",
        body: "x",
      });
      expect(empty.status).toBe(204);
      expect(empty.body).toBeNull();
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("rejects with the signal's reason when aborted before the answer, and errors the body when aborted while it streams", async () => {
    const server = createServer((request, response) => {
      if (request.url === "/slow") return; // never answers
      response.writeHead(200);
      response.write(Buffer.alloc(1024, 1)); // then never ends
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const fetchImpl = createKeepAliveFetch({ idleConnectionMs: 2_000 });
      const before = new AbortController();
      const pending = fetchImpl(`http://127.0.0.1:${port}/slow`, { signal: before.signal });
      const reason = new Error("stop");
      setTimeout(() => before.abort(reason), 50);
      await expect(pending).rejects.toBe(reason);
      const during = new AbortController();
      const response = await fetchImpl(`http://127.0.0.1:${port}/stream`, {
        signal: during.signal,
      });
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      expect((await reader.read()).value?.byteLength).toBe(1024);
      during.abort(new Error("stop reading"));
      await expect(reader.read()).rejects.toThrow();
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("hands a long body on in order, as the parser's own chunks, fails one cut short and closes the connection of one cancelled", async () => {
    const bytes = Buffer.alloc(24 * 1024 * 1024);
    for (let index = 0; index < bytes.byteLength; index += 4) bytes.writeUInt32LE(index, index);
    const closed: string[] = [];
    const server = createServer((request, response) => {
      request.socket.once("close", () => closed.push(request.url ?? ""));
      if (request.url === "/cut") {
        response.writeHead(200, { "content-length": "10000" });
        response.write(Buffer.alloc(5000, 7), () => setTimeout(() => request.socket.destroy(), 20));
        return;
      }
      response.writeHead(200, { "content-length": String(bytes.byteLength) });
      response.end(bytes);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const fetchImpl = createKeepAliveFetch({ idleConnectionMs: 2_000 });
      // Read slowly at first, so the body pauses and resumes many times; every byte must arrive in order.
      const whole = await fetchImpl(`http://127.0.0.1:${port}/whole`);
      const received = Buffer.alloc(bytes.byteLength);
      let filled = 0;
      let copies = 0;
      for await (const chunk of whole.body as unknown as AsyncIterable<Uint8Array>) {
        if (!Buffer.isBuffer(chunk)) copies += 1;
        received.set(chunk, filled);
        filled += chunk.byteLength;
        if (filled < 2 * 1024 * 1024) await new Promise((resolve) => setTimeout(resolve, 1));
      }
      expect(filled).toBe(bytes.byteLength);
      expect(received.equals(bytes)).toBe(true);
      // No chunk was copied into a plain Uint8Array on its way (as `Readable.toWeb` does).
      expect(copies).toBe(0);

      const cut = await fetchImpl(`http://127.0.0.1:${port}/cut`);
      await expect(cut.arrayBuffer()).rejects.toThrow();

      const cancelled = await fetchImpl(`http://127.0.0.1:${port}/cancelled`);
      const reader = (cancelled.body as ReadableStream<Uint8Array>).getReader();
      expect((await reader.read()).done).toBe(false);
      await reader.cancel();
      await expect.poll(() => closed.includes("/cancelled")).toBe(true);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("fails an answer Response cannot hold (a status text with a control byte) as a network failure, not a crash", async () => {
    const server = createNetServer((socket) =>
      socket.once("data", () => socket.end("HTTP/1.1 200 O\x7fK\r\ncontent-length: 2\r\n\r\nok")),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const failure = await createKeepAliveFetch({ idleConnectionMs: 2_000 })(
        `http://127.0.0.1:${port}/`,
      ).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(TypeError);
      expect((failure as TypeError).message).toBe("fetch failed");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
