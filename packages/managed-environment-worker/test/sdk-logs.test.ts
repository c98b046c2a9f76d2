import Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type Stack, startStack } from "./support/stack.js";

let stack: Stack;

beforeEach(async () => {
  stack = await startStack();
});
afterEach(async () => {
  await stack.close();
});

it("sends the SDK's own lines (a failed poll it retries) to the worker's logger, not the console", async () => {
  const printed: unknown[] = [];
  const original = console.warn;
  console.warn = (...args: unknown[]) => void printed.push(args);
  try {
    // Nothing listens on port 9: every poll fails to connect, and the SDK's poller retries it itself.
    const client = new Anthropic({
      baseURL: "http://127.0.0.1:9",
      apiKey: null,
      authToken: null,
      maxRetries: 0,
    });
    const worker = await stack.worker({ client, fallbackPollIntervalMs: 200 });
    const controller = new AbortController();
    const running = worker.run(controller.signal);
    while (
      !stack.logs.some(
        (entry) =>
          entry.event === "sdk.log" && String(entry.fields.message).startsWith("poll failed"),
      )
    ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    controller.abort();
    await running;
    const line = stack.logs.find((entry) => entry.event === "sdk.log");
    expect(line?.level).toBe("warn");
    // 1.14 says "Connection error.", 1.17 names the address it could not reach.
    expect(String(line?.fields.message)).toMatch(/Connection error|Connection to \S+ failed/);
    expect(printed).toEqual([]);
  } finally {
    console.warn = original;
  }
});

it("leaves a client that has its own logger with it", async () => {
  const own: unknown[] = [];
  const sink = (...args: unknown[]) => void own.push(args);
  const client = new Anthropic({
    baseURL: "http://127.0.0.1:9",
    apiKey: null,
    authToken: null,
    maxRetries: 0,
    logger: { error: sink, warn: sink, info: sink, debug: sink },
  });
  const worker = await stack.worker({ client, fallbackPollIntervalMs: 200 });
  const controller = new AbortController();
  const running = worker.run(controller.signal);
  while (own.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
  controller.abort();
  await running;
  expect(stack.logs.some((entry) => entry.event === "sdk.log")).toBe(false);
});
