import { afterAll, beforeAll, expect, it } from "vitest";
import { type ServiceStack, freePort, startServiceStack } from "./support/service-stack.js";

const SECRET = `whsec_${Buffer.from("local-control-plane-webhook-key!").toString("base64")}`;

let stack: ServiceStack;
let port: number;

beforeAll(async () => {
  port = await freePort();
  stack = await startServiceStack({ webhook: { port, secret: SECRET } });
});

afterAll(async () => {
  await stack?.close();
});

it("serves POST /webhook with the webhook key: the control plane's signed delivery is accepted, a forged one is refused", async () => {
  // An hour between fallback drains: the webhook's drain or the long poll claims the item.
  const service = stack.start({
    OMA_HTTP_PORT: String(port),
    OMA_WEBHOOK_KEY: SECRET,
    OMA_POLL_INTERVAL_MS: "3600000",
  });
  try {
    const http = await service.httpUrl();
    const session = stack.plane.createSession({ environmentId: stack.environment.id });
    stack.plane.queueTurn(session.id, {
      toolCalls: [{ name: "bash", input: { command: "echo via-webhook" } }],
    });
    const [delivery] = await stack.plane.webhookDeliveries();
    expect(delivery?.status).toBe(200);
    await service.waitFor("webhook.accepted");
    const done = await service.waitFor("work.done", (line) => line.sessionId === session.id);
    expect(done.outcome).toBe("completed");

    const forged = await fetch(`${http}/webhook`, {
      method: "POST",
      headers: {
        "webhook-id": "msg_forged",
        "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
        "webhook-signature": "v1,AAAA",
      },
      body: JSON.stringify({ type: "session.status_idled" }),
    });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toEqual({
      code: "unauthorized",
      message: "webhook refused: unauthorized",
    });
  } finally {
    expect(await service.stop()).toBe(0);
  }
  expect(service.output()).not.toContain(SECRET);
});
