import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { ManagedEnvironmentWorker, WebhookRequest } from "../src/index.js";
import { type Stack, startStack } from "./support/stack.js";

const SECRET = `whsec_${Buffer.from("local-control-plane-webhook-key!").toString("base64")}`;

let stack: Stack;
let server: Server;
let worker: ManagedEnvironmentWorker | undefined;
const received: { body: string; headers: Record<string, string>; status: number }[] = [];
const scheduled: Promise<unknown>[] = [];

beforeEach(async () => {
  received.length = 0;
  scheduled.length = 0;
  // The webhook endpoint a deployment exposes: raw body and headers straight into handleWebhook.
  server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const headers = Object.fromEntries(
      Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
    );
    let status = 204;
    try {
      await worker?.handleWebhook({
        body,
        headers,
        waitUntil: (promise) => void scheduled.push(promise),
      });
    } catch (error) {
      status = ManagedRuntimeError.isInstance(error) ? error.httpStatus : 500;
    }
    received.push({ body, headers, status });
    response.writeHead(status).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  stack = await startStack({ webhook: { url, secret: SECRET } });
});
afterEach(async () => {
  worker = undefined;
  await stack.close();
  await new Promise((resolve) => server.close(resolve));
});

const drainPasses = () => stack.logs.filter((entry) => entry.event === "worker.drain_pass").length;

it("runs queued work on the control plane's signed webhook; a redelivery schedules no second drain", async () => {
  worker = await stack.worker({ webhookKey: SECRET });
  const session = stack.plane.createSession({ environmentId: stack.environment.id });
  stack.plane.queueTurn(session.id, {
    toolCalls: [{ name: "bash", input: { command: "echo via-webhook" } }],
  });
  const [delivery] = await stack.plane.webhookDeliveries();
  expect(delivery?.status).toBe(204);
  await Promise.all(scheduled);
  expect(
    stack.reports.map((report) => report.outcome.type === "ran" && report.outcome.result.type),
  ).toEqual(["completed"]);
  expect(JSON.stringify(stack.plane.transcript(session.id).entries[0]?.result?.content)).toContain(
    "via-webhook",
  );
  const passes = drainPasses();
  expect(passes).toBeGreaterThanOrEqual(1);

  // The same delivery again (a retry after a lost response): verified, recognised, nothing scheduled.
  const first = received[0] as { body: string; headers: Record<string, string> };
  const request: WebhookRequest = {
    body: first.body,
    headers: first.headers,
    waitUntil: (promise) => void scheduled.push(promise),
  };
  expect(await worker.handleWebhook(request)).toEqual({
    eventType: "session.pending",
    duplicate: true,
  });
  expect(await worker.handleWebhook(request)).toEqual({
    eventType: "session.pending",
    duplicate: true,
  });
  await Promise.all(scheduled);
  expect(drainPasses()).toBe(passes);
});

it("coalesces drains called while one runs into that drain plus exactly one more pass", async () => {
  worker = await stack.worker({ webhookKey: SECRET });
  const drains = [worker.drain(), worker.drain(), worker.drain()];
  expect(new Set(drains).size).toBe(1);
  expect(await drains[0]).toEqual({ claimed: 0 });
  expect(drainPasses()).toBe(2);
  // Once settled, the next call starts a pass of its own.
  await worker.drain();
  expect(drainPasses()).toBe(3);
});

it("refuses a webhook whose signature does not verify, and runs nothing for it", async () => {
  worker = await stack.worker({
    webhookKey: `whsec_${Buffer.from("some-other-signing-key-material!").toString("base64")}`,
  });
  const session = stack.plane.createSession({ environmentId: stack.environment.id });
  stack.plane.queueTurn(session.id, { toolCalls: [{ name: "bash", input: { command: "true" } }] });
  const deliveries = await stack.plane.webhookDeliveries();
  expect(deliveries.map((delivery) => delivery.status)).toContain(401);
  expect(received.every((entry) => entry.status === 401)).toBe(true);
  expect(drainPasses()).toBe(0);
  expect(stack.reports).toEqual([]);
});
