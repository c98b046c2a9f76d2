/**
 * The container-runtime check's reading, on a client that fails as Cloudflare's bridge does (its error
 * bodies, parsed by the driver's own error mapping): a runtime found down names the runtime; a runtime that
 * answers, a check that fails, and errors that name their own cause keep the call's error. The local stack's
 * end-to-end cases are in truthful-errors.test.ts.
 */
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { createRuntimeCheckingClient } from "../src/runtime/runtime-checking-client.js";
import type { BridgeClient, BridgeExecEvent } from "../src/wire/bridge-client.js";
import { bridgeErrorFromPayload } from "../src/wire/bridge-errors.js";

const transportFailure = () =>
  bridgeErrorFromPayload("exec", null, {
    error:
      "exec failed: Sandbox operation sandbox.exec was interrupted while the platform was updating the sandbox runtime",
    code: "exec_transport_error",
  });
const startFailure = (operation: string) => () =>
  bridgeErrorFromPayload(operation, 502, {
    error: "pool error: Failed to start container",
    code: "pool_error",
  });
const capacityRefusal = () =>
  bridgeErrorFromPayload("exec", 503, {
    error: "instance limit reached (1/1)",
    code: "capacity_exceeded",
  });

/** A bridge whose every call fails with `failure`. */
function failingBridge(failure: () => Error): BridgeClient {
  return {
    create: async () => "abc",
    running: async () => Promise.reject(failure()),
    // biome-ignore lint/correctness/useYield: the stream fails before its first event
    async *exec(): AsyncGenerator<BridgeExecEvent> {
      throw failure();
    },
    readFile: async () => Promise.reject(failure()),
    writeFile: async () => Promise.reject(failure()),
    persist: async () => Promise.reject(failure()),
    hydrate: async () => Promise.reject(failure()),
    destroy: async () => Promise.reject(failure()),
  };
}

async function execError(client: BridgeClient): Promise<ManagedRuntimeError> {
  try {
    for await (const _event of client.exec("abc", { argv: ["true"] })) {
      // no events
    }
  } catch (error) {
    if (ManagedRuntimeError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("exec did not fail");
}

const DOWN =
  "the local container runtime at http://127.0.0.1:1 is not answering (connect ECONNREFUSED)";

describe("a call that fails as the sandbox's", () => {
  it("names the container runtime when the check finds it down, and keeps the bridge's answer as cause", async () => {
    let checks = 0;
    const client = createRuntimeCheckingClient(failingBridge(transportFailure), async () => {
      checks += 1;
      return DOWN;
    });
    const error = await execError(client);
    expect(checks).toBe(1);
    expect(error.code).toBe("unavailable");
    expect(error.message).toBe(
      `bridge exec failed: the container runtime behind the bridge is unavailable: ${DOWN}`,
    );
    expect(error.context).toMatchObject({
      operation: "exec",
      service: "container_runtime",
      bridgeCode: "exec_transport_error",
    });
    expect((error.cause as Error).message).toMatch(/updating the sandbox runtime/);
  });

  it("is checked for file calls and deletes too", async () => {
    const client = createRuntimeCheckingClient(
      failingBridge(startFailure("file.read")),
      async () => DOWN,
    );
    await expect(client.readFile("abc", "a.txt")).rejects.toMatchObject({
      code: "unavailable",
      message: expect.stringMatching(/^bridge file\.read failed: the container runtime/),
      context: { service: "container_runtime", bridgeCode: "pool_error" },
    });
    await expect(client.destroy("abc")).rejects.toMatchObject({
      code: "unavailable",
      context: { operation: "delete", service: "container_runtime" },
    });
  });

  it("stays the sandbox's own when the runtime answers or the check itself fails", async () => {
    for (const check of [async () => null, async () => Promise.reject(new Error("check broke"))]) {
      const error = await execError(
        createRuntimeCheckingClient(failingBridge(transportFailure), check),
      );
      expect(error.code).toBe("sandbox_failed");
      expect(error.message).toMatch(/^bridge exec failed: exec failed: /);
    }
  });

  it("leaves errors that name their own cause alone, without a check", async () => {
    let checks = 0;
    const client = createRuntimeCheckingClient(failingBridge(capacityRefusal), async () => {
      checks += 1;
      return DOWN;
    });
    expect((await execError(client)).code).toBe("insufficient_capacity");
    expect(checks).toBe(0);
  });
});
