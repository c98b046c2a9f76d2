/**
 * A call this side gave up on (aborted, timed out) may still be starting a container in the bridge. When the
 * sandbox is destroyed after that, nothing may keep running: a run that resumes after its fence expired and
 * its sandbox was reaped by another worker makes exactly such a call and then terminates.
 */
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTombstoningClient } from "../src/runtime/tombstoning-client.js";
import { type BridgeClient, createBridgeClient } from "../src/wire/bridge-client.js";

let bridge: LocalBridge;

beforeAll(async () => {
  bridge = await startLocalBridge();
}, 120_000);

afterAll(async () => {
  await bridge?.stop();
});

const containers = () => bridge.containerServer.containers.list().map((container) => container.id);

/**
 * A fetch that sends each request without the caller's signal, so the bridge carries it out in full, and
 * rejects at once when the caller's signal aborts: the caller gives up while the bridge goes on, as under
 * load when a call's deadline passes while its container starts. After `delay()`, the next request reaches the
 * bridge only at `deliver()`; `settled` waits for every request sent.
 */
function givingUpFetch() {
  const sent: Promise<unknown>[] = [];
  let delaying = false;
  let deliver: () => void = () => undefined;
  let delivered = Promise.resolve();
  const fetchImpl: typeof fetch = (input, init) => {
    const { signal, ...rest } = init ?? {};
    const held = delaying ? delivered : Promise.resolve();
    delaying = false;
    const request = held.then(() => fetch(input, rest));
    sent.push(request.then((response) => response.clone().arrayBuffer()).catch(() => undefined));
    if (!signal) return request;
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal.reason ?? new Error("aborted"));
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      request.then(resolve, reject);
    });
  };
  return {
    fetchImpl,
    delay() {
      delaying = true;
      delivered = new Promise((resolve) => (deliver = resolve));
    },
    deliver: () => deliver(),
    settled: () => Promise.all(sent),
  };
}

async function drain(client: BridgeClient, id: string, signal: AbortSignal): Promise<unknown> {
  try {
    for await (const _event of client.exec(id, { argv: ["true"], signal })) void _event;
    return null;
  } catch (error) {
    return error;
  }
}

describe("a call given up on before its sandbox is destroyed", () => {
  it("leaves no container once the bridge has carried it out", async () => {
    const before = new Set(containers());
    const started = () => containers().filter((id) => !before.has(id));
    // The reaper: another worker's driver, which destroyed the sandbox while its holder was stopped.
    const reaper = createTombstoningClient(
      createBridgeClient({ baseUrl: bridge.url, apiKey: bridge.apiKey }),
    );
    const transport = givingUpFetch();
    const holder = createTombstoningClient(
      createBridgeClient({
        baseUrl: bridge.url,
        apiKey: bridge.apiKey,
        fetch: transport.fetchImpl,
        retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
      }),
    );
    const id = await holder.create();
    expect(await drain(holder, id, new AbortController().signal)).toBeNull();
    await reaper.destroy(id);
    expect(started()).toEqual([]);

    // The holder resumes: its next call asks the bridge for the reaped id, and it gives up on the call
    // (its lease was found lost) before the answer; then it terminates the sandbox, as cleanup does. The
    // bridge carries the call out after that delete, starting a container for the id.
    transport.delay();
    const controller = new AbortController();
    const call = drain(holder, id, controller.signal);
    controller.abort(new Error("the run's lease was lost"));
    expect(await call).toMatchObject({ code: "aborted" });
    await holder.destroy(id);
    transport.deliver();
    await transport.settled();
    // Whatever the late call started ends without anyone asking again.
    await expect.poll(started, { timeout: 60_000, interval: 250 }).toEqual([]);
  }, 180_000);
});
