/**
 * The probe's reading, on a client that answers as Cloudflare's bridge does (its error bodies, parsed by the
 * driver's own error mapping): one container's failure keeps its own error; a start that fails again is the
 * container runtime unavailable. The local stack's end-to-end case is in truthful-errors.test.ts.
 */
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { createRuntimeProbingClient } from "../src/runtime/runtime-probing-client.js";
import type { BridgeClient, BridgeExecEvent } from "../src/wire/bridge-client.js";
import { bridgeErrorFromPayload } from "../src/wire/bridge-errors.js";

const startFailure = (operation: string) =>
  bridgeErrorFromPayload(operation, 502, {
    error: "pool error: Failed to start container",
    code: "pool_error",
  });
const transportFailure = () =>
  bridgeErrorFromPayload("exec", null, {
    error: "exec failed: SandboxError: HTTP error! status: 500",
    code: "exec_transport_error",
  });

/** A bridge whose every call fails with `failure`, and whose `running` answers as `probe` says. */
function failingBridge(
  failure: () => Error,
  probe: () => Promise<boolean>,
): BridgeClient & { probes: number } {
  const client = {
    probes: 0,
    create: async () => "abc",
    running: async () => {
      client.probes += 1;
      return probe();
    },
    // biome-ignore lint/correctness/useYield: the stream fails before its first event
    async *exec(): AsyncGenerator<BridgeExecEvent> {
      throw failure();
    },
    readFile: async () => Promise.reject(failure()),
    writeFile: async () => Promise.reject(failure()),
    persist: async () => Promise.reject(failure()),
    hydrate: async () => Promise.reject(failure()),
    destroy: async () => Promise.reject(startFailure("delete")),
  };
  return client;
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

describe("a failure the bridge reports ambiguously", () => {
  it("stays the sandbox's own when the probe finds a container running", async () => {
    const bridge = failingBridge(transportFailure, async () => true);
    const error = await execError(createRuntimeProbingClient(bridge));
    expect(bridge.probes).toBe(1);
    expect(error.code).toBe("sandbox_failed");
    expect(error.message).toBe(
      "bridge exec failed: exec failed: SandboxError: HTTP error! status: 500",
    );
  });

  it("is the container runtime unavailable when the probe's start fails too", async () => {
    const bridge = failingBridge(transportFailure, () => Promise.reject(startFailure("running")));
    const client = createRuntimeProbingClient(bridge);
    const error = await execError(client);
    expect(error.code).toBe("unavailable");
    expect(error.context).toMatchObject({
      operation: "exec",
      service: "container_runtime",
      bridgeCode: "exec_transport_error",
    });
    expect(error.message).toMatch(
      /^bridge exec failed: the container runtime behind the bridge is unavailable: /,
    );
    // A delete refused the same way soon after names the same cause, without starting a container to probe.
    const probes = bridge.probes;
    await expect(client.destroy("abc")).rejects.toMatchObject({
      code: "unavailable",
      context: { service: "container_runtime" },
    });
    expect(bridge.probes).toBe(probes);
  });

  it("is probed for file calls too, and a start failure at acquire reads the same", async () => {
    const bridge = failingBridge(
      () => startFailure("file.read"),
      () => Promise.reject(startFailure("running")),
    );
    await expect(createRuntimeProbingClient(bridge).readFile("abc", "a.txt")).rejects.toMatchObject(
      {
        code: "unavailable",
        message: expect.stringMatching(
          /^bridge file\.read failed: the container runtime behind the bridge is unavailable/,
        ),
      },
    );
  });

  it("leaves errors that name their cause alone, and a delete without a finding keeps its own", async () => {
    const capacity = () =>
      bridgeErrorFromPayload("exec", 503, {
        error: "instance limit reached (1/1)",
        code: "capacity_exceeded",
      });
    const bridge = failingBridge(capacity, async () => true);
    const client = createRuntimeProbingClient(bridge);
    expect((await execError(client)).code).toBe("insufficient_capacity");
    expect(bridge.probes).toBe(0);
    await expect(client.destroy("abc")).rejects.toMatchObject({ code: "sandbox_failed" });
  });
});
