/**
 * Faults injected into real runs: the bridge Worker killed, the container server stopped, the host process
 * SIGKILLed, the blob store made read-only, each at restore, harness and checkpoint. After each: nothing was published, the sandbox was journaled, the
 * reconciler (after recovery) leaves zero containers on the runtime, and the next work item restores the
 * last published tree.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type StackWorld,
  bodyContains,
  createStackWorld,
  faultingFetch,
  isCheckpointTransfer,
  isRestoreTransfer,
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

const containers = () => bridge.containerServer.containers.list().map((container) => container.id);
/** When each scenario started: a container left behind is named with its start time against these. */
const timeline: string[] = [];
beforeEach(
  ({ task }) =>
    void timeline.push(`${new Date().toISOString()} ${task.suite?.name} > ${task.name}`),
);

/**
 * Waits (up to 10 s) for exactly `count` containers on the runtime. A driver's late deletes of a sandbox it
 * destroyed earlier (after a call that was in flight at the time) make the bridge start a fresh container and
 * destroy it again within a second or so, possibly during a later scenario; a container that stays fails this,
 * and the failure names each container left with its start, beside each scenario's.
 */
async function expectContainers(count: number): Promise<void> {
  try {
    await expect.poll(containers, { timeout: 10_000, interval: 100 }).toHaveLength(count);
  } catch (error) {
    const left = bridge.containerServer.containers
      .list()
      .map((container) => `${container.id} started ${container.createdAt.toISOString()}`);
    throw new Error(
      `expected ${count} containers, found:\n${left.join("\n")}\nscenarios:\n${timeline.join("\n")}`,
      { cause: error },
    );
  }
}

async function newWorld(storeDir?: string): Promise<StackWorld> {
  const dir = await mkdtemp(join(tmpdir(), "oma-faults-"));
  dirs.push(dir);
  const world = createStackWorld({ bridge, dir, ...(storeDir ? { storeDir } : {}) });
  await world.ready();
  return world;
}

/** Publishes `tree.txt = v1` for the session: the tree every later work item must restore. */
async function seed(world: StackWorld, session: string): Promise<void> {
  expect(await world.run(workItem(session), shellProfile("echo v1 > tree.txt"))).toMatchObject({
    type: "completed",
    revision: 1,
  });
  await expectContainers(0);
}

/** The next work item sees the last published tree and publishes revision 2: the faulted run published nothing. */
async function expectRecovered(world: StackWorld, session: string): Promise<void> {
  const next = await world.run(workItem(session), shellProfile('test "$(cat tree.txt)" = v1'));
  expect(next).toMatchObject({ type: "completed", revision: 2 });
  await expectContainers(0);
  expect(await world.journal.list({ limit: 10 })).toEqual([]);
}

const TRIGGERS = {
  restore: isRestoreTransfer,
  harness: (_url: URL, init: RequestInit | undefined) => bodyContains(init, "FAULT_HARNESS"),
  checkpoint: isCheckpointTransfer,
} as const;
type Stage = keyof typeof TRIGGERS;
const STAGES = Object.keys(TRIGGERS) as Stage[];

/** Seeds the session, then runs a work item that `fault` breaks at the first request of `stage`. */
async function runFaulted(
  world: StackWorld,
  session: string,
  stage: Stage,
  fault: () => Promise<void> | void,
) {
  await seed(world, session);
  let fired = false;
  const fetchImpl = faultingFetch(async (url, init) => {
    if (fired || !TRIGGERS[stage](url, init)) return;
    fired = true;
    await fault();
  });
  const faulted = await world.run(
    workItem(session),
    shellProfile("echo FAULT_HARNESS > /dev/null; echo v2 > tree.txt"),
    fetchImpl,
  );
  expect(fired).toBe(true);
  return faulted;
}

describe("bridge Worker killed", () => {
  it.each(STAGES)(
    "during %s",
    async (stage) => {
      const world = await newWorld();
      const session = `worker-killed-${stage}`;
      const faulted = await runFaulted(world, session, stage, () => bridge.stopWorker());
      expect(faulted.type).not.toBe("completed");
      expect((await world.journal.list({ limit: 10 })).length).toBeGreaterThan(0);
      expect(containers().length).toBeGreaterThan(0);

      await bridge.restartWorker();
      const summary = await world.reconcile(workItem(session));
      expect(summary.journal).toMatchObject({ failed: 0, held: 0 });
      await expectContainers(0);
      expect(await world.orphans.list({ limit: 10 })).toEqual([]);
      await expectRecovered(world, session);
    },
    180_000,
  );
});

describe("container server stopped", () => {
  it.each(STAGES)(
    "during %s",
    async (stage) => {
      const world = await newWorld();
      const session = `container-server-stopped-${stage}`;
      const faulted = await runFaulted(world, session, stage, () => bridge.stopContainerServer());
      expect(faulted.type).not.toBe("completed");
      // Terminate cannot be confirmed while the runtime is down, so the record stays for the reconciler.
      expect((await world.journal.list({ limit: 10 })).length).toBeGreaterThan(0);

      await bridge.restartContainerServer();
      const summary = await world.reconcile(workItem(session));
      expect(summary.journal).toMatchObject({ failed: 0, held: 0 });
      expect(await world.journal.list({ limit: 10 })).toEqual([]);
      await expectContainers(0);
      expect(await world.orphans.list({ limit: 10 })).toEqual([]);
      await expectRecovered(world, session);
    },
    180_000,
  );
});

describe("host process SIGKILLed", () => {
  const child = fileURLToPath(new URL("./faults/host-child.mjs", import.meta.url));
  const LEASE_TTL_MS = 6_000;

  it.each(["restore", "harness", "checkpoint"] as const)(
    "during %s",
    async (stage) => {
      const world = await newWorld();
      const session = `host-killed-${stage}`;
      await seed(world, session);
      const dir = dirs[dirs.length - 1] as string;
      const scope = workItem(session);
      const config = {
        database: join(dir, "runtime.sqlite"),
        storeDir: join(dir, "store"),
        spoolDir: join(dir, "spool"),
        bridgeUrl: bridge.url,
        stage,
        leaseTtlMs: LEASE_TTL_MS,
        scope,
        profile: shellProfile("echo FAULT_HARNESS > /dev/null; echo v2 > tree.txt"),
      };
      await mkdir(config.spoolDir);
      const host: ChildProcess = spawn(process.execPath, [child, JSON.stringify(config)], {
        env: { ...process.env, BRIDGE_API_KEY: bridge.apiKey },
        stdio: ["ignore", "pipe", "inherit"],
      });
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        host.once("exit", (_code, signal) => resolve(signal)),
      );
      for await (const line of createInterface({ input: host.stdout as NodeJS.ReadableStream })) {
        if (line === `fault-point ${stage}`) break;
        if (line.startsWith("result"))
          throw new Error(`the child host finished before the fault: ${line}`);
      }
      host.kill("SIGKILL");
      expect(await exited).toBe("SIGKILL");
      // Its spools (open at every stage's fault point) had no names: a killed host leaves none behind.
      expect(await readdir(config.spoolDir)).toEqual([]);
      expect(await world.journal.list({ limit: 10 })).toMatchObject([
        { scope, sandbox: { provider: "cloudflare-bridge" } },
      ]);
      await expectContainers(1);

      // The dead host's fence is still current until it expires: its sandbox is not touched before that.
      expect((await world.reconcile(scope)).journal).toMatchObject({ held: 1, reaped: 0 });
      await expectContainers(1);
      await new Promise((resolve) => setTimeout(resolve, LEASE_TTL_MS + 500));
      expect((await world.reconcile(scope)).journal).toMatchObject({ reaped: 1, held: 0 });
      await expectContainers(0);
      await expectRecovered(world, session);
    },
    180_000,
  );
});

const canMount =
  process.getuid?.() === 0 &&
  (() => {
    try {
      execFileSync("mount", ["--version"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  })();

describe("blob store made read-only", () => {
  it.skipIf(!canMount).each(STAGES)(
    "during %s fails the run with storage_unwritable and still stops the sandbox",
    async (stage) => {
      const source = await mkdtemp(join(tmpdir(), "oma-faults-store-src-"));
      const target = await mkdtemp(join(tmpdir(), "oma-faults-store-"));
      dirs.push(source);
      await mkdir(target, { recursive: true });
      execFileSync("mount", ["--bind", source, target]);
      try {
        const world = await newWorld(target);
        const session = `store-read-only-${stage}`;
        let journaled = 0;
        const faulted = await runFaulted(world, session, stage, async () => {
          journaled = (await world.journal.list({ limit: 10 })).length;
          execFileSync("mount", ["-o", "remount,bind,ro", target]);
        });
        expect(journaled).toBe(1);
        // Reads still work, so the run gets as far as storing the checkpoint, which names the real cause.
        expect(faulted).toMatchObject({ type: "failed", error: { code: "storage_unwritable" } });
        expect(faulted.type === "failed" && faulted.error.message).toContain("EROFS");
        // The bridge is up: terminate is confirmed in cleanup, so the journal record is already resolved.
        await expectContainers(0);
        expect(await world.journal.list({ limit: 10 })).toEqual([]);
        expect((await world.reconcile(workItem(session))).journal).toMatchObject({
          failed: 0,
          held: 0,
        });
        execFileSync("mount", ["-o", "remount,bind,rw", target]);
        await expectRecovered(world, session);
      } finally {
        execFileSync("umount", ["-l", target]);
        await rm(target, { recursive: true, force: true });
      }
    },
    180_000,
  );
});
