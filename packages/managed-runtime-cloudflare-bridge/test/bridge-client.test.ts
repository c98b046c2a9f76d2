import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BridgeClient, createBridgeClient } from "../src/wire/bridge-client.js";
import { type HostileBridge, json, sse, startHostileBridge } from "./hostile-bridge.js";

const API_KEY = "bridge-key-7f3a9c-never-log-me";
const ID = "abcdefghijklmnopqrstuvwxyz";
let bridge: HostileBridge;
let client: BridgeClient;

beforeAll(async () => {
  bridge = await startHostileBridge();
  client = createBridgeClient({
    baseUrl: `${bridge.url}/`,
    apiKey: API_KEY,
    retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
  });
});
afterAll(() => bridge.close());

async function failure(promise: Promise<unknown>): Promise<ManagedRuntimeError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!ManagedRuntimeError.isInstance(error))
    throw new Error(`expected a typed error, got ${String(error)}`);
  expect(JSON.stringify(error.toJSON())).not.toContain(API_KEY);
  expect(error.message).not.toContain(API_KEY);
  return error;
}

async function execAll(argv: string[] = ["true"]) {
  const events = [];
  for await (const event of client.exec(ID, { argv })) events.push(event);
  return events;
}

describe("bridge client against a hostile bridge", () => {
  it("names the network error behind an unreachable bridge in the message and keeps it as the cause", async () => {
    const { createServer } = await import("node:net");
    const closed = createServer();
    const port = await new Promise<number>((resolve) =>
      closed.listen(0, "127.0.0.1", () => resolve((closed.address() as { port: number }).port)),
    );
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const offline = createBridgeClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: API_KEY,
      retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 1 },
    });
    const error = await failure(offline.create());
    expect(error.code).toBe("unavailable");
    expect(error.message).toMatch(
      /^bridge create unreachable: fetch failed \(ECONNREFUSED: connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/,
    );
    expect(error.cause).toBeInstanceOf(Error);
    // Every attempt was refused: the bridge never saw the call, and the error says so.
    expect(error.context).toMatchObject({ unsent: true });
    // So with a name that resolves to nothing (`.invalid` never does).
    const nowhere = createBridgeClient({
      baseUrl: "http://bridge.invalid",
      apiKey: API_KEY,
      retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
    });
    expect((await failure(nowhere.create())).context).toMatchObject({ unsent: true });
  });

  it("does not call a failure unsent once any attempt may have reached the bridge", async () => {
    // The first attempt reaches a bridge that drops it; the bridge is gone before the retry.
    let calls = 0;
    bridge.respond((_request, response) => {
      calls++;
      response.socket?.resetAndDestroy();
    });
    const { createServer } = await import("node:net");
    const closed = createServer();
    const port = await new Promise<number>((resolve) =>
      closed.listen(0, "127.0.0.1", () => resolve((closed.address() as { port: number }).port)),
    );
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    let attempt = 0;
    const flaky = createBridgeClient({
      baseUrl: bridge.url,
      apiKey: API_KEY,
      retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 1 },
      fetch: (input, init) => {
        attempt++;
        const url = new URL(String(input));
        if (attempt > 1) url.port = String(port);
        return fetch(url, init);
      },
    });
    const error = await failure(flaky.running(ID));
    expect(calls).toBe(1);
    expect(attempt).toBe(3);
    expect(error.code).toBe("unavailable");
    expect(error.context).not.toHaveProperty("unsent");
  });

  it("names a bridge that closed the connection before answering, with Node's fetch and its own", async () => {
    for (const fetchImpl of [fetch, undefined]) {
      const closing = createBridgeClient({
        baseUrl: bridge.url,
        apiKey: API_KEY,
        retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
        ...(fetchImpl ? { fetch: fetchImpl } : {}),
      });
      // The request arrived; the bridge (a Worker killed as it was about to answer) closes without a word.
      bridge.respond((_request, response) => void response.socket?.destroy());
      const error = await failure(closing.readFile(ID, "/workspace/a.txt"));
      expect(error.code).toBe("unavailable");
      expect(error.context).toMatchObject({ operation: "file.read" });
      expect(error.context).not.toHaveProperty("unsent");
      expect(error.message).toMatch(
        /^bridge file\.read broke off: the bridge closed the connection before answering \(fetch failed \((UND_ERR_SOCKET: other side closed|ECONNRESET: socket hang up)\)\)$/,
      );
    }
  });

  it("decodes a well-formed exec stream and sends the key only as a bearer header", async () => {
    bridge.respond((_request, response) =>
      sse(response, [
        "event: stdout\r\ndata: aGkK\r\n\r\n",
        "event: stderr\ndata: ZXJy\ndata: Cg==\n\n",
        'event: exit\ndata: {"exit_code":3}\n\n',
      ]),
    );
    const events = await execAll();
    expect(
      events.map((event) =>
        event.type === "exit" ? event.exitCode : new TextDecoder().decode(event.data),
      ),
    ).toEqual(["hi\n", "err\n", 3]);
    const last = bridge.requests.at(-1);
    expect(last?.authorization).toBe(`Bearer ${API_KEY}`);
    expect(last?.url).not.toContain(API_KEY);
  });

  it("rejects a stream that ends without exit", async () => {
    bridge.respond((_request, response) => sse(response, ["event: stdout\ndata: aGkK\n\n"]));
    expect((await failure(execAll())).code).toBe("upstream_protocol");
  });

  it("rejects malformed frames: not base64, exit without a code, error event", async () => {
    bridge.respond((_request, response) =>
      sse(response, ["event: stdout\ndata: !!not base64!!\n\n"]),
    );
    expect((await failure(execAll())).code).toBe("upstream_protocol");
    bridge.respond((_request, response) => sse(response, ['event: exit\ndata: {"exit":1}\n\n']));
    expect((await failure(execAll())).code).toBe("upstream_protocol");
    bridge.respond((_request, response) => sse(response, ["event: exit\ndata: not json\n\n"]));
    expect((await failure(execAll())).code).toBe("upstream_protocol");
    bridge.respond((_request, response) =>
      sse(response, [
        'event: error\ndata: {"error":"exec failed: no such dir","code":"exec_transport_error"}\n\n',
      ]),
    );
    const streamError = await failure(execAll());
    expect(streamError.code).toBe("sandbox_failed");
    expect(streamError.context.bridgeCode).toBe("exec_transport_error");
  });

  it("rejects a wrong content type", async () => {
    bridge.respond((_request, response) => json(response, 200, { ok: true }));
    expect((await failure(execAll())).code).toBe("upstream_protocol");
  });

  it("refuses a 10 MiB single frame", async () => {
    bridge.respond((_request, response) =>
      sse(response, [`event: stdout\ndata: ${"QUFB".repeat((10 * 1024 * 1024) / 4)}\n\n`]),
    );
    expect((await failure(execAll())).code).toBe("limit_exceeded");
  });

  it("maps 401, 503 capacity, 413 and plain-text 404 to typed errors", async () => {
    bridge.respond((_request, response) =>
      json(response, 401, { error: "Unauthorized", code: "unauthorized" }),
    );
    expect((await failure(client.create())).code).toBe("unauthorized");
    bridge.respond((_request, response) =>
      json(response, 503, { error: "no capacity", code: "capacity_exceeded" }),
    );
    expect((await failure(client.create())).code).toBe("insufficient_capacity");
    bridge.respond((_request, response) =>
      json(response, 413, { error: "too large", code: "payload_too_large" }),
    );
    expect((await failure(client.hydrate(ID, new Uint8Array(4)))).code).toBe("limit_exceeded");
    bridge.respond((_request, response) =>
      response.writeHead(404, { "content-type": "text/plain" }).end("404 Not Found"),
    );
    expect((await failure(client.running(ID))).code).toBe("not_found");
  });

  it("rejects malformed JSON answers and bad sandbox ids", async () => {
    bridge.respond((_request, response) => json(response, 200, { id: "NOT-A-BRIDGE-ID" }));
    expect((await failure(client.create())).code).toBe("upstream_protocol");
    bridge.respond((_request, response) =>
      response.writeHead(200, { "content-type": "application/json" }).end("{oops"),
    );
    expect((await failure(client.running(ID))).code).toBe("upstream_protocol");
    await expect(client.running("../etc")).rejects.toSatisfy((error: unknown) =>
      ManagedRuntimeError.hasCode(error, "upstream_protocol"),
    );
  });

  it("retries idempotent calls on transient failures but never exec or hydrate", async () => {
    let calls = 0;
    bridge.respond((_request, response) => {
      calls++;
      if (calls < 3) return json(response, 503, { error: "busy", code: "pool_error" });
      json(response, 200, { running: true });
    });
    expect(await client.running(ID)).toBe(true);
    expect(calls).toBe(3);

    calls = 0;
    bridge.respond((_request, response) => {
      calls++;
      json(response, 503, { error: "busy", code: "pool_error" });
    });
    await failure(execAll());
    expect(calls).toBe(1);
    calls = 0;
    await failure(client.hydrate(ID, new Uint8Array(8)));
    expect(calls).toBe(1);
  });

  it("retries a helper exec whose connection was reset before any answer, never an agent's exec, and no answer", async () => {
    let calls = 0;
    const resetFirst = (
      answer: (response: Parameters<Parameters<HostileBridge["respond"]>[0]>[1]) => void,
    ) =>
      bridge.respond((_request, response) => {
        calls++;
        if (calls === 1) return void response.socket?.resetAndDestroy();
        answer(response);
      });
    const exitZero = (response: Parameters<Parameters<HostileBridge["respond"]>[0]>[1]) =>
      sse(response, ['event: exit\ndata: {"exit_code":0}\n\n']);
    const helperExec = async () => {
      const events = [];
      for await (const event of client.exec(ID, { argv: ["true"], retryUnreachable: true }))
        events.push(event);
      return events;
    };

    resetFirst(exitZero);
    expect(await helperExec()).toEqual([{ type: "exit", exitCode: 0 }]);
    expect(calls).toBe(2);

    calls = 0;
    resetFirst(exitZero);
    const error = await failure(execAll());
    expect(error.code).toBe("unavailable");
    // The bridge took the connection and dropped it: it went away before answering, it was not unreachable.
    expect(error.message).toMatch(
      /^bridge exec broke off: the bridge closed the connection before answering \(.*ECONNRESET/,
    );
    expect(calls).toBe(1);

    // A capacity refusal is an answer: it surfaces at once, also for a helper.
    calls = 0;
    bridge.respond((_request, response) => {
      calls++;
      json(response, 503, { error: "instance limit reached", code: "capacity_exceeded" });
    });
    expect((await failure(helperExec())).code).toBe("insufficient_capacity");
    expect(calls).toBe(1);
  });

  it("sends no retry for a sandbox once a delete of it was sent", async () => {
    const slow = createBridgeClient({
      baseUrl: bridge.url,
      apiKey: API_KEY,
      retry: { attempts: 4, baseDelayMs: 400, maxDelayMs: 400 },
      random: () => 0,
    });
    const seen: string[] = [];
    bridge.respond((request, response) => {
      seen.push(`${request.method} ${request.url?.replace(`/v1/sandbox/${ID}`, "") || "/"}`);
      if (request.method === "DELETE") return void response.writeHead(204).end();
      response.socket?.resetAndDestroy();
    });
    const read = failure(slow.readFile(ID, "/workspace/a.txt"));
    // The read failed once and waits 400 ms before its retry; the delete goes out meanwhile.
    while (seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await slow.destroy(ID);
    expect((await read).code).toBe("lease_lost");
    // One read, the delete, and no read after it: a retry would have started a fresh container for the id.
    expect(seen).toEqual(["GET /file/workspace/a.txt", "DELETE /"]);
  });

  it("ends a call as lease_lost when the delete went out before its failed attempt came back", async () => {
    const seen: string[] = [];
    bridge.respond((request, response) => {
      seen.push(`${request.method} ${request.url?.replace(`/v1/sandbox/${ID}`, "") || "/"}`);
      response.writeHead(204).end();
    });
    // The read's first attempt fails only after the destroy of its sandbox was sent.
    let destroyed: Promise<void> | undefined;
    const racing = createBridgeClient({
      baseUrl: bridge.url,
      apiKey: API_KEY,
      retry: { attempts: 4, baseDelayMs: 400, maxDelayMs: 400 },
      random: () => 0,
      fetch: async (input, init) => {
        if ((init?.method ?? "GET") !== "GET") return fetch(input, init);
        destroyed = racing.destroy(ID);
        throw new TypeError("fetch failed");
      },
    });
    const read = await failure(racing.readFile(ID, "/workspace/a.txt"));
    await destroyed;
    expect(read.code).toBe("lease_lost");
    expect(seen).toEqual(["DELETE /"]);
  });

  it("treats 204 and 404 deletes as success and shares concurrent deletes", async () => {
    let calls = 0;
    bridge.respond((_request, response) => {
      calls++;
      setTimeout(() => response.writeHead(calls % 2 === 0 ? 404 : 204).end(), 20);
    });
    await Promise.all([client.destroy(ID), client.destroy(ID), client.destroy(ID)]);
    expect(calls).toBe(1);
    await client.destroy(ID);
    expect(calls).toBe(2);
  });

  it("treats a delete refused with capacity_exceeded as success (no container runs for the id), not other 503s", async () => {
    // The bridge looks a sandbox's container up before deleting it; only an id without one reaches its pool's
    // capacity check, so this refusal shows there is nothing to delete.
    bridge.respond((_request, response) =>
      json(response, 503, {
        error: "Cannot start container: instance limit reached (4/4).",
        code: "capacity_exceeded",
      }),
    );
    await expect(client.destroy(ID)).resolves.toBeUndefined();
    bridge.respond((_request, response) =>
      json(response, 503, { error: "busy", code: "pool_error" }),
    );
    expect((await failure(client.destroy(ID))).code).toBe("sandbox_failed");
  });

  it("sends a delete of a sandbox only after another client's delete of it in this process answered", async () => {
    // The bridge starts a container to answer a delete of a sandbox whose container is gone; two at once can
    // leave one of those containers running unassigned, so a host's late delete and a reconciler's reap queue.
    const other = createBridgeClient({
      baseUrl: bridge.url,
      apiKey: API_KEY,
      retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
    });
    const OTHER_ID = "zyxwvutsrqponmlkjihgfedcba";
    const events: string[] = [];
    let first = true;
    bridge.respond((request, response) => {
      const name = request.url?.endsWith(OTHER_ID) ? "other" : "id";
      events.push(`start ${name}`);
      // The first answer is a bridge error: the queue waits for a failed delete as for a successful one.
      const status = name === "id" && first ? 500 : 204;
      if (name === "id") first = false;
      setTimeout(() => {
        events.push(`end ${name}`);
        response.writeHead(status).end();
      }, 50);
    });
    const results = await Promise.allSettled([
      client.destroy(ID),
      other.destroy(ID),
      other.destroy(OTHER_ID),
      client.destroy(ID),
    ]);
    // The last call joins the first one's request on the same client.
    expect(results.map((result) => result.status)).toEqual([
      "rejected",
      "fulfilled",
      "fulfilled",
      "rejected",
    ]);
    expect(events.filter((event) => event.endsWith(" id"))).toEqual([
      "start id",
      "end id",
      "start id",
      "end id",
    ]);
    // Another sandbox's delete does not wait.
    expect(events.slice(0, 2)).toEqual(["start id", "start other"]);
  });
});
