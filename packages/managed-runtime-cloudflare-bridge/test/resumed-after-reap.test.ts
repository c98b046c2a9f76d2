/**
 * A run stopped past its fence's expiry (as by SIGSTOP) while another worker's reconciler reaps its sandbox,
 * then resumed: it finds its lease lost with its harness call in flight. It must call the sandbox for nothing
 * but its end (the bridge starts a container for any call on the reaped id, and calls racing on an id without
 * a container can leave one that no delete reaches), and the call the bridge carries out after the run's own
 * delete must not leave a container either.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bodyContains, createStackWorld, shellProfile, workItem } from "./faults/stack-world.js";

let bridge: LocalBridge;
let dir: string;

beforeAll(async () => {
  bridge = await startLocalBridge();
  dir = await mkdtemp(join(tmpdir(), "oma-resumed-"));
}, 120_000);

afterAll(async () => {
  await bridge?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const containers = () => bridge.containerServer.containers.list().map((container) => container.id);

describe("a run resumed after its sandbox was reaped", () => {
  it("leaves no container once the bridge has carried out its last call", async () => {
    const world = createStackWorld({ bridge, dir });
    await world.ready();
    const before = new Set(containers());
    const started = () => containers().filter((id) => !before.has(id));
    const scope = workItem("resumed-after-reap");

    let sandboxId: string | null = null;
    let ownDeleteAnswered: () => void = () => undefined;
    const ownDelete = new Promise<void>((resolve) => (ownDeleteAnswered = resolve));
    let late: Promise<unknown> | null = null;
    let reaped: Promise<unknown> | null = null;
    const fetchImpl: typeof fetch = async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (sandboxId !== null && init?.method === "DELETE" && url.pathname.endsWith(sandboxId)) {
        const response = await fetch(input, init);
        ownDeleteAnswered();
        return response;
      }
      if (late !== null || !bodyContains(init, "FAULT_HARNESS")) return fetch(input, init);
      sandboxId = url.pathname.split("/")[3] ?? null;
      // The run stops here. Its fence expires and another worker's reconciler reaps the sandbox.
      reaped = (async () => {
        await world.client.run(
          "UPDATE runtime_resource_fences SET expires_at = 1 WHERE session_id = ?",
          [scope.sessionId],
        );
        return world.reconcile(scope);
      })();
      // The bridge gets the harness call only after the run deleted the sandbox itself, and answers it.
      const { signal, ...rest } = init ?? {};
      const delivered = ownDelete.then(() => fetch(input, rest));
      late = delivered.then((response) => response.clone().arrayBuffer()).catch(() => undefined);
      return new Promise((resolve, reject) => {
        signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
        delivered.then(resolve, reject);
      });
    };

    // The monitor's next renewal finds the fence lost and aborts the harness call.
    const result = await world.run(
      scope,
      shellProfile("echo FAULT_HARNESS > /dev/null; echo v1 > tree.txt"),
      fetchImpl,
      5_000,
    );
    expect(result.type).toBe("lease_lost");
    expect(await reaped).toMatchObject({ journal: { reaped: 1 } });
    await late;
    await expect.poll(started, { timeout: 60_000, interval: 250 }).toEqual([]);
    expect(await world.journal.list({ limit: 10 })).toEqual([]);
    world.close();
  }, 180_000);
});
