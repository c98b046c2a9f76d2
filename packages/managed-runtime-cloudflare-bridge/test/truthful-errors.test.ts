/**
 * A fault in the middle of a call names what failed: the bridge Worker killed while an exec streams or while
 * a checkpoint part is read from it is the bridge going away, never an internal error or a store's failure;
 * the container server stopped under a live bridge is the container runtime unavailable, never the sandbox's
 * own failure or a provider's maintenance, and the reconciler leaves no container once it is back.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type StackWorld,
  bodyContains,
  createStackWorld,
  shellProfile,
  workItem,
} from "./faults/stack-world.js";

let bridge: LocalBridge;
const dirs: string[] = [];

beforeAll(async () => {
  bridge = await startLocalBridge();
}, 120_000);

afterAll(async () => {
  await bridge?.stop();
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function newWorld(): Promise<StackWorld> {
  const dir = await mkdtemp(join(tmpdir(), "oma-truthful-"));
  dirs.push(dir);
  const world = createStackWorld({ bridge, dir });
  await world.ready();
  return world;
}

/**
 * A fetch that runs `fault` (by default: kill the bridge Worker) 300 ms after the response to the first request
 * `trigger` picks has started.
 */
function faultAfterResponse(
  trigger: (url: URL, init: RequestInit | undefined) => boolean,
  fault: () => Promise<void> = () => bridge.stopWorker(),
): {
  fetch: typeof fetch;
  fired: () => boolean;
} {
  let fired = false;
  return {
    fired: () => fired,
    fetch: async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const response = await fetch(input, init);
      if (!fired && trigger(url, init)) {
        fired = true;
        setTimeout(() => void fault(), 300);
      }
      return response;
    },
  };
}

/**
 * A fetch that kills the bridge Worker once the driver has read the first bytes of the response to the first
 * request `trigger` picks, and only then hands it the rest: the Worker dies while that body is being read.
 */
function killWorkerMidBody(trigger: (url: URL, init: RequestInit | undefined) => boolean): {
  fetch: typeof fetch;
  fired: () => boolean;
} {
  let fired = false;
  return {
    fired: () => fired,
    fetch: async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const response = await fetch(input, init);
      if (fired || !trigger(url, init) || !response.body) return response;
      fired = true;
      const reader = response.body.getReader();
      let killed = false;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const chunk = await reader.read();
          if (!killed) {
            killed = true;
            await bridge.stopWorker();
          }
          if (chunk.done) controller.close();
          else controller.enqueue(chunk.value);
        },
        cancel: (reason) => reader.cancel(reason),
      });
      return new Response(body, { status: response.status, headers: response.headers });
    },
  };
}

describe("the bridge Worker killed mid-call", () => {
  it("while the harness's exec streams", async () => {
    const world = await newWorld();
    const session = "killed-mid-harness";
    const faults = faultAfterResponse((_url, init) => bodyContains(init, "FAULT_HARNESS"));
    const result = await world.run(
      workItem(session),
      shellProfile("echo FAULT_HARNESS > /dev/null; sleep 5; echo v2 > tree.txt"),
      faults.fetch,
    );
    expect(faults.fired()).toBe(true);
    expect(result).toMatchObject({ type: "failed", error: { code: "unavailable" } });
    expect(result.type === "failed" && result.error.message).toMatch(
      /^harness-run failed: bridge exec broke off: the bridge closed the connection/,
    );
    await bridge.restartWorker();
  }, 180_000);

  it("while a checkpoint part is read from it", async () => {
    const world = await newWorld();
    const session = "killed-mid-transfer";
    // The file GET of the archive of changed files the sandbox made for the checkpoint.
    const faults = killWorkerMidBody(
      (url, init) => (init?.method ?? "GET") === "GET" && url.pathname.endsWith("/bundle"),
    );
    const result = await world.run(
      workItem(session),
      shellProfile("head -c 24000000 /dev/urandom > big.bin"),
      faults.fetch,
    );
    expect(faults.fired()).toBe(true);
    // Not the store (healthy) and not the sandbox's archive: the bridge that carried it went away.
    expect(result).toMatchObject({
      type: "failed",
      error: { code: "unavailable", context: { stage: "workspace-checkpoint" } },
    });
    const message = result.type === "failed" ? result.error.message : "";
    // The checkpoint reads the next part and waits for the next one to be archived while it reads this one:
    // whichever of those requests fails first is reported, each naming the bridge in its own way.
    expect(message).toMatch(
      /^workspace-checkpoint failed: bridge (file\.read|persist|exec) (broke off: the bridge closed the connection (mid-response|before answering)|unreachable: fetch failed \(ECONNREFUSED)/,
    );
    expect(message).not.toMatch(/blob store|archive/);
    await bridge.restartWorker();
  }, 180_000);
});

describe("the container runtime stopped while the bridge Worker runs", () => {
  const RUNTIME_DOWN =
    /bridge (exec|hydrate|file\.write|file\.read|delete) failed: the container runtime behind the bridge is unavailable: the local container runtime at http:\/\/127\.0\.0\.1:\d+ is not answering \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/;
  const containers = () => bridge.containerServer.containers.list();

  /** Runtime back: one reconciler pass settles the journal and leaves no container on the runtime. */
  async function expectNothingLeft(world: StackWorld, session: string): Promise<void> {
    await bridge.restartContainerServer();
    const summary = await world.reconcile(workItem(session));
    expect(summary.journal).toMatchObject({ failed: 0, held: 0 });
    expect(await world.journal.list({ limit: 10 })).toEqual([]);
    // Late deletes of the destroyed sandbox may start and end a container for a moment; none stays.
    await expect.poll(containers, { timeout: 10_000, interval: 100 }).toHaveLength(0);
    expect(await world.run(workItem(session), shellProfile("echo v1 > tree.txt"))).toMatchObject({
      type: "completed",
    });
    await expect.poll(containers, { timeout: 10_000, interval: 100 }).toHaveLength(0);
  }

  it("while the harness's exec runs", async () => {
    const world = await newWorld();
    const session = "runtime-killed-mid-harness";
    const faults = faultAfterResponse(
      (_url, init) => bodyContains(init, "FAULT_HARNESS"),
      () => bridge.stopContainerServer(),
    );
    const result = await world.run(
      workItem(session),
      shellProfile("echo FAULT_HARNESS > /dev/null; sleep 5; echo v2 > tree.txt"),
      faults.fetch,
    );
    expect(faults.fired()).toBe(true);
    expect(result).toMatchObject({
      type: "failed",
      error: {
        code: "unavailable",
        context: { service: "container_runtime", stage: "harness-run" },
      },
    });
    const message = result.type === "failed" ? result.error.message : "";
    expect(message).toMatch(/^harness-run failed: /);
    expect(message).toMatch(RUNTIME_DOWN);
    expect(message).not.toMatch(/updating the sandbox runtime/);
    await expectNothingLeft(world, session);
  }, 180_000);

  it("before an item starts", async () => {
    const world = await newWorld();
    const session = "runtime-down-at-acquire";
    await bridge.stopContainerServer();
    const result = await world.run(workItem(session), shellProfile("echo v1 > tree.txt"));
    expect(result).toMatchObject({
      type: "failed",
      error: {
        code: "unavailable",
        context: { service: "container_runtime", stage: "sandbox-acquire" },
      },
    });
    const message = result.type === "failed" ? result.error.message : "";
    expect(message).toMatch(/^sandbox-acquire failed: /);
    expect(message).toMatch(RUNTIME_DOWN);
    expect(message).not.toMatch(/updating the sandbox runtime/);
    await expectNothingLeft(world, session);
  }, 180_000);
});
