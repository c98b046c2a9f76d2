import {
  SandboxFailedError,
  UnavailableError,
} from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it, vi } from "vitest";
import { LATE_DELETES_MS, createTombstoningClient } from "../src/runtime/tombstoning-client.js";
import type { BridgeClient, BridgeExecEvent } from "../src/wire/bridge-client.js";

// A recording client in place of the HTTP one: these tests are about which calls the wrapper lets through
// and when it deletes; the wrapper over the real bridge is exercised by local-stack.test.ts.
function recordingClient() {
  const calls: string[] = [];
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let holdCalls = false;
  const step = async (name: string) => {
    calls.push(`${name}:start`);
    if (holdCalls) await gate;
    calls.push(`${name}:end`);
  };
  const client: BridgeClient = {
    create: async () => "sandbox",
    running: async (id) => (await step(`running ${id}`), true),
    async *exec(id): AsyncGenerator<BridgeExecEvent> {
      await step(`exec ${id}`);
      yield { type: "exit", exitCode: 0 };
    },
    readFile: async (id) => (await step(`readFile ${id}`), new ReadableStream()),
    writeFile: async (id) => void (await step(`writeFile ${id}`)),
    persist: async (id) => (await step(`persist ${id}`), new ReadableStream()),
    hydrate: async (id) => void (await step(`hydrate ${id}`)),
    destroy: async (id) => void calls.push(`destroy ${id}`),
  };
  return {
    client,
    calls,
    hold: () => void (holdCalls = true),
    release: () => release(),
  };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("tombstoning bridge client", () => {
  it("refuses every call for a destroyed sandbox with lease_lost and reaches nothing", async () => {
    const inner = recordingClient();
    const client = createTombstoningClient(inner.client);
    await client.destroy("a");
    inner.calls.length = 0;

    expect(await client.running("a")).toBe(false);
    const refusals = await Promise.all([
      client.readFile("a", "/workspace/x").catch((error: { code?: string }) => error.code),
      client
        .writeFile("a", "/workspace/x", new Uint8Array())
        .catch((error: { code?: string }) => error.code),
      client.persist("a", []).catch((error: { code?: string }) => error.code),
      client.hydrate("a", new Uint8Array()).catch((error: { code?: string }) => error.code),
      client
        .exec("a", { argv: ["true"] })
        .next()
        .catch((error: { code?: string }) => error.code),
    ]);
    expect(refusals).toEqual([
      "lease_lost",
      "lease_lost",
      "lease_lost",
      "lease_lost",
      "lease_lost",
    ]);
    await settle();
    expect(inner.calls).toEqual([]);
  });

  it("deletes once more after a call that was in flight when the sandbox was destroyed", async () => {
    const inner = recordingClient();
    const client = createTombstoningClient(inner.client);
    inner.hold();
    const status = client.running("a");
    const exec = (async () => {
      for await (const _event of client.exec("a", { argv: ["true"] })) void _event;
    })();
    await settle();
    await client.destroy("a");
    inner.release();
    await Promise.all([status, exec]);
    await settle();
    // The first delete may have found no container yet; each call that was starting one is followed by a delete.
    expect(inner.calls.filter((call) => call.startsWith("destroy"))).toHaveLength(3);
    expect(inner.calls.indexOf("destroy a")).toBeLessThan(inner.calls.indexOf("running a:end"));
    expect(inner.calls.lastIndexOf("destroy a")).toBeGreaterThan(inner.calls.indexOf("exec a:end"));
  });

  it("issues no delete after calls for sandboxes that stay alive", async () => {
    const inner = recordingClient();
    const client = createTombstoningClient(inner.client);
    await client.running("b");
    await client.writeFile("b", "/workspace/x", new Uint8Array());
    for await (const _event of client.exec("b", { argv: ["true"] })) void _event;
    await settle();
    expect(inner.calls.some((call) => call.startsWith("destroy"))).toBe(false);
  });

  it("waits for its own delete to answer before the follow-up, so the follow-up is a request of its own", async () => {
    const inner = recordingClient();
    let answerDelete: () => void = () => undefined;
    const deleteAnswered = new Promise<void>((resolve) => (answerDelete = resolve));
    const originalDestroy = inner.client.destroy;
    inner.client.destroy = async (id) => {
      inner.calls.push(`destroy ${id}:start`);
      if (inner.calls.filter((call) => call.startsWith("destroy")).length === 1)
        await deleteAnswered;
      await originalDestroy(id);
    };
    const client = createTombstoningClient(inner.client);
    const status = client.running("c");
    const destroyed = client.destroy("c");
    await status;
    await settle();
    expect(inner.calls.filter((call) => call === "destroy c:start")).toHaveLength(1);
    answerDelete();
    await destroyed;
    await settle();
    expect(inner.calls.filter((call) => call === "destroy c:start")).toHaveLength(2);
  });

  it("deletes again a while after a late call settled, for a container the bridge may still have been starting", async () => {
    vi.useFakeTimers();
    try {
      const inner = recordingClient();
      const client = createTombstoningClient(inner.client);
      inner.hold();
      const status = client.running("d");
      await vi.advanceTimersByTimeAsync(0);
      await client.destroy("d");
      inner.release();
      await status;
      await vi.advanceTimersByTimeAsync(0);
      const deletes = () => inner.calls.filter((call) => call === "destroy d").length;
      expect(deletes()).toBe(2);
      let elapsed = 0;
      for (const [index, delayMs] of LATE_DELETES_MS.entries()) {
        await vi.advanceTimersByTimeAsync(delayMs - elapsed - 1);
        expect(deletes()).toBe(2 + index);
        await vi.advanceTimersByTimeAsync(1);
        expect(deletes()).toBe(3 + index);
        elapsed = delayMs;
      }
      await vi.advanceTimersByTimeAsync(60_000);
      expect(deletes()).toBe(2 + LATE_DELETES_MS.length);
    } finally {
      vi.useRealTimers();
    }
  });

  it("moves the late deletes after the last late call instead of adding a set per call", async () => {
    vi.useFakeTimers();
    try {
      const inner = recordingClient();
      let releaseSecond: () => void = () => undefined;
      const secondGate = new Promise<void>((resolve) => (releaseSecond = resolve));
      const originalReadFile = inner.client.readFile;
      inner.client.readFile = async (id, path) => {
        await secondGate;
        return originalReadFile(id, path);
      };
      const client = createTombstoningClient(inner.client);
      inner.hold();
      const status = client.running("e");
      const read = client.readFile("e", "/workspace/x");
      await vi.advanceTimersByTimeAsync(0);
      await client.destroy("e");
      inner.release();
      await status;
      await vi.advanceTimersByTimeAsync(1_000);
      releaseSecond();
      await read;
      await vi.advanceTimersByTimeAsync(0);
      const deletes = () => inner.calls.filter((call) => call === "destroy e").length;
      // The delete itself and one at once after each late call.
      expect(deletes()).toBe(3);
      // The first call's late deletes were moved to follow the second call's settling, 1 s later.
      const [soon, last] = LATE_DELETES_MS as [number, number];
      await vi.advanceTimersByTimeAsync(soon - 1);
      expect(deletes()).toBe(3);
      await vi.advanceTimersByTimeAsync(1);
      expect(deletes()).toBe(4);
      await vi.advanceTimersByTimeAsync(last - soon);
      expect(deletes()).toBe(5);
      await vi.advanceTimersByTimeAsync(120_000);
      expect(deletes()).toBe(5);
    } finally {
      vi.useRealTimers();
    }
  });

  it("deletes again a while after destroying a sandbox whose call was given up before the destroy", async () => {
    vi.useFakeTimers();
    try {
      const inner = recordingClient();
      const client = createTombstoningClient(inner.client);
      inner.hold();
      // The run's lease is lost: its in-flight call is aborted here, while the bridge goes on with it.
      const controller = new AbortController();
      inner.client.readFile = (id) =>
        new Promise((_resolve, reject) => {
          inner.calls.push(`readFile ${id}:start`);
          controller.signal.addEventListener("abort", () => reject(controller.signal.reason));
        });
      const read = client.readFile("f", "/workspace/x", controller.signal).catch(() => "given up");
      controller.abort(new Error("lease lost"));
      expect(await read).toBe("given up");
      await client.destroy("f");
      const deletes = () => inner.calls.filter((call) => call === "destroy f").length;
      expect(deletes()).toBe(1);
      const [soon, last] = LATE_DELETES_MS as [number, number];
      await vi.advanceTimersByTimeAsync(soon);
      expect(deletes()).toBe(2);
      await vi.advanceTimersByTimeAsync(last - soon);
      expect(deletes()).toBe(3);
      // A second destroy finds nothing given up since the first.
      await vi.advanceTimersByTimeAsync(120_000);
      await client.destroy("f");
      await vi.advanceTimersByTimeAsync(120_000);
      expect(deletes()).toBe(4);
    } finally {
      vi.useRealTimers();
    }
  });

  it("adds no delete for a call refused on every attempt, which the bridge never saw", async () => {
    vi.useFakeTimers();
    try {
      const inner = recordingClient();
      const refused = (unsent: boolean) => async () => {
        throw new UnavailableError({
          message: "bridge file.write unreachable: fetch failed (ECONNREFUSED)",
          context: { operation: "file.write", ...(unsent ? { unsent: true } : {}) },
        });
      };
      const client = createTombstoningClient(inner.client);
      const deletes = (id: string) => inner.calls.filter((call) => call === `destroy ${id}`).length;
      inner.client.writeFile = refused(true);
      await expect(client.writeFile("u", "/workspace/x", new Uint8Array())).rejects.toMatchObject({
        code: "unavailable",
      });
      await client.destroy("u");
      // The same failure without `unsent` may have reached the bridge: it is followed by late deletes.
      inner.client.writeFile = refused(false);
      await expect(client.writeFile("v", "/workspace/x", new Uint8Array())).rejects.toMatchObject({
        code: "unavailable",
      });
      await client.destroy("v");
      // Refused while the destroy went out: it settles after it, and still started nothing.
      let refuse: () => void = () => undefined;
      inner.client.writeFile = () =>
        new Promise((_resolve, reject) => {
          refuse = () => refused(true)().catch(reject);
        });
      const late = client.writeFile("w", "/workspace/x", new Uint8Array()).catch((error) => error);
      await client.destroy("w");
      refuse();
      expect(await late).toMatchObject({ code: "unavailable" });
      await vi.advanceTimersByTimeAsync(120_000);
      expect(deletes("u")).toBe(1);
      expect(deletes("v")).toBe(1 + LATE_DELETES_MS.length);
      expect(deletes("w")).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("adds no late delete for a call the bridge answered with an error before the destroy", async () => {
    vi.useFakeTimers();
    try {
      const inner = recordingClient();
      inner.client.writeFile = async () => {
        throw new SandboxFailedError({ message: "bridge file.write failed: exec_error" });
      };
      const client = createTombstoningClient(inner.client);
      await expect(client.writeFile("g", "/workspace/x", new Uint8Array())).rejects.toMatchObject({
        code: "sandbox_failed",
      });
      await client.destroy("g");
      await vi.advanceTimersByTimeAsync(120_000);
      expect(inner.calls.filter((call) => call === "destroy g")).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
