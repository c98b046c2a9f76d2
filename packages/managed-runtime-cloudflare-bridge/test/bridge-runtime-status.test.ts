import { describe, expect, it } from "vitest";
import { type BridgeCheckpointer, createBridgeRuntime } from "../src/runtime/bridge-runtime.js";
import type { BridgeClient, BridgeExecEvent } from "../src/wire/bridge-client.js";

// A scripted client in place of the HTTP one: these tests pin which calls `status()` makes for each answer
// of the bridge; the same paths over Cloudflare's bridge Worker are exercised by local-stack.test.ts.
function scriptedClient(answers: { running: boolean; markerExit: number }) {
  const calls: string[] = [];
  const client: BridgeClient = {
    create: async () => "sandbox",
    running: async (id) => (calls.push(`running ${id}`), answers.running),
    async *exec(id, input): AsyncGenerator<BridgeExecEvent> {
      calls.push(`exec ${id} ${input.argv.join(" ")}`);
      yield { type: "exit", exitCode: answers.markerExit };
    },
    readFile: async () => new ReadableStream(),
    writeFile: async () => undefined,
    persist: async () => new ReadableStream(),
    hydrate: async () => undefined,
    destroy: async (id) => void calls.push(`destroy ${id}`),
  };
  return { client, calls };
}

const unusedCheckpointer: BridgeCheckpointer = {
  checkpoint: () => Promise.reject(new Error("not used")),
  prepareRestore: () => Promise.reject(new Error("not used")),
  restore: () => Promise.reject(new Error("not used")),
};

function runtimeOver(client: BridgeClient) {
  return createBridgeRuntime({
    provider: "cloudflare-bridge",
    client,
    sandboxId: "sb1",
    checkpointer: unusedCheckpointer,
    maxRequestBytes: 1 << 20,
    maxExecOutputBytes: 1 << 20,
  });
}

describe("bridge runtime status", () => {
  it("deletes what the bridge started to answer when it reports the sandbox not running", async () => {
    const { client, calls } = scriptedClient({ running: false, markerExit: 0 });
    expect(await runtimeOver(client).status()).toBe("stopped");
    expect(calls).toEqual(["running sb1", "destroy sb1"]);
  });

  it("deletes a running container without the runtime marker and reports stopped", async () => {
    const { client, calls } = scriptedClient({ running: true, markerExit: 1 });
    expect(await runtimeOver(client).status()).toBe("stopped");
    expect(calls).toEqual(["running sb1", "exec sb1 test -f /tmp/.oma-runtime-sb1", "destroy sb1"]);
  });

  it("reports its own container running and deletes nothing", async () => {
    const { client, calls } = scriptedClient({ running: true, markerExit: 0 });
    expect(await runtimeOver(client).status()).toBe("running");
    expect(calls).toEqual(["running sb1", "exec sb1 test -f /tmp/.oma-runtime-sb1"]);
  });

  it("still reports stopped when the delete after a not-running answer fails", async () => {
    const { client, calls } = scriptedClient({ running: false, markerExit: 0 });
    const failing: BridgeClient = {
      ...client,
      destroy: async (id) => (
        calls.push(`destroy ${id}`), Promise.reject(new Error("unreachable"))
      ),
    };
    expect(await runtimeOver(failing).status()).toBe("stopped");
    expect(calls).toEqual(["running sb1", "destroy sb1"]);
  });
});
