import { randomBytes } from "node:crypto";
import { type IncomingHttpHeaders, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type LocalControlPlane, startLocalControlPlane } from "../src/index.js";
import { claimOne, sdkClient } from "./helpers.js";

interface Received {
  readonly body: string;
  readonly headers: IncomingHttpHeaders;
}

/** A receiver standing where an environment worker's webhook endpoint would. */
async function startReceiver(status = 204) {
  const received: Received[] = [];
  const waiters: (() => void)[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received.push({ body: Buffer.concat(chunks).toString("utf8"), headers: request.headers });
      response.writeHead(status).end();
      for (const wake of waiters.splice(0)) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    async next(count: number) {
      while (received.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
      return received[count - 1]!;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const headerRecord = (headers: IncomingHttpHeaders) =>
  Object.fromEntries(Object.entries(headers).map(([key, value]) => [key, String(value)]));

describe("webhooks", () => {
  const secret = `whsec_${randomBytes(24).toString("base64")}`;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let plane: LocalControlPlane;
  beforeEach(async () => {
    receiver = await startReceiver();
    plane = await startLocalControlPlane({ webhook: { url: receiver.url, secret } });
  });
  afterEach(async () => {
    await plane.stop();
    await receiver.close();
  });

  it("signs a session.pending event per queued item that client.beta.webhooks.unwrap verifies", async () => {
    const environment = plane.createEnvironment();
    const session = plane.createSession({ environmentId: environment.id });
    plane.queueTurn(session.id, { toolCalls: [] });
    const delivery = await receiver.next(1);
    const client = sdkClient(plane.url);
    const event = client.beta.webhooks.unwrap(delivery.body, {
      headers: headerRecord(delivery.headers),
      key: secret,
    });
    expect(event).toMatchObject({
      type: "event",
      id: delivery.headers["webhook-id"],
      data: { type: "session.pending", id: session.id },
    });
    expect(delivery.body).not.toContain(environment.environmentKey);
    const [work] = plane.workItems(environment.id);
    expect(await plane.webhookDeliveries()).toEqual([
      {
        webhookId: delivery.headers["webhook-id"],
        sessionId: session.id,
        workId: work!.id,
        status: 204,
        error: null,
      },
    ]);
  });

  it("produces signatures that fail verification with another key or a changed body", async () => {
    const environment = plane.createEnvironment();
    plane.queueTurn(plane.createSession({ environmentId: environment.id }).id, { toolCalls: [] });
    const delivery = await receiver.next(1);
    const client = sdkClient(plane.url);
    expect(() =>
      client.beta.webhooks.unwrap(delivery.body, {
        headers: headerRecord(delivery.headers),
        key: `whsec_${randomBytes(24).toString("base64")}`,
      }),
    ).toThrow();
    expect(() =>
      client.beta.webhooks.unwrap(delivery.body.replace("session.pending", "session.running"), {
        headers: headerRecord(delivery.headers),
        key: secret,
      }),
    ).toThrow();
  });

  it("announces an item again when its lease expires and it returns to the queue", async () => {
    let now = Date.now();
    const expiring = await startLocalControlPlane({
      webhook: { url: receiver.url, secret },
      clock: () => now,
      defaultTtlSeconds: 5,
      sweepIntervalMs: 50,
    });
    try {
      const environment = expiring.createEnvironment();
      expiring.queueTurn(expiring.createSession({ environmentId: environment.id }).id, {
        toolCalls: [],
      });
      await claimOne(sdkClient(expiring.url), environment.id, environment.environmentKey);
      now += 6_000;
      // Nothing touches the item: the sweep applies the expiry and the re-queue is announced.
      await receiver.next(2);
      expect(expiring.workItems(environment.id)).toEqual([
        expect.objectContaining({ state: "queued" }),
      ]);
      expect((await expiring.webhookDeliveries()).map((delivery) => delivery.status)).toEqual([
        204, 204,
      ]);
    } finally {
      await expiring.stop();
    }
  });
});

describe("webhook delivery failures", () => {
  it("records a refused delivery after its attempts, without failing the queueing", async () => {
    const receiver = await startReceiver(500);
    const plane = await startLocalControlPlane({
      webhook: { url: receiver.url, secret: `whsec_${randomBytes(24).toString("base64")}` },
      webhookAttempts: 2,
    });
    try {
      const environment = plane.createEnvironment();
      plane.queueTurn(plane.createSession({ environmentId: environment.id }).id, { toolCalls: [] });
      expect(await plane.webhookDeliveries()).toEqual([expect.objectContaining({ status: 500 })]);
      expect(receiver.received).toHaveLength(2);
    } finally {
      await plane.stop();
      await receiver.close();
    }
  });
});
