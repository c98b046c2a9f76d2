/**
 * Host transaction benchmark, run with `pnpm bench` (root: `pnpm bench:host`). Prints figures; asserts nothing.
 *
 * 1. Overhead per work item: the full fenced transaction over in-memory ports, against a baseline of
 *    the same port calls awaited one after another with no host around them, in the same process.
 * 2. 1,000 concurrent work items: peak heap while all of them hold a fence and a sandbox.
 */
import type {
  ManagedRuntimeProfile,
  RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";
import { createManagedRuntimeHost } from "../src/host/create-host.js";
import { createMemoryFencePort, createMemoryOrphanPort } from "../src/stores/index.js";
import { createFakeCredentialEgressPort } from "../src/testing/fake-optional-ports.js";
import { createScriptedHarnessDriver } from "../src/testing/fake-harness.js";
import { createFakeSandbox } from "../src/testing/fake-sandbox.js";
import {
  createFakeOutputPort,
  createFakeWorkspacePort,
} from "../src/testing/fake-storage-ports.js";
import { systemScheduler } from "../src/time.js";

const ITEMS = 3_000;
const WARMUP = 300;
const CONCURRENT = 1_000;
const MiB = 1024 * 1024;

const profile: ManagedRuntimeProfile = {
  workspace: { requirement: "durable" },
  outputs: { requirement: "durable" },
  runtimeCheckpoint: "disabled",
  credentialEgress: { requirement: "required" },
  driver: { type: "ama_worker", process: { command: "/usr/local/bin/ama-worker" } },
};
const scopeOf = (index: number): RuntimeResourceScope => ({
  workspaceId: "wsp",
  environmentId: "env",
  sessionId: `ses-${index}`,
  workId: `work-${index}`,
});

function createPorts(harnessMs = 0) {
  return {
    fences: createMemoryFencePort(),
    orphans: createMemoryOrphanPort(),
    sandbox: createFakeSandbox().port,
    workspace: createFakeWorkspacePort(),
    outputs: createFakeOutputPort(),
    credentialEgress: createFakeCredentialEgressPort(),
    harnessDriver: createScriptedHarnessDriver({
      durationMs: harnessMs,
      scheduler: systemScheduler,
    }),
  };
}

/** The host's port calls of one work item, awaited in order with nothing around them. */
async function bareCalls(
  ports: ReturnType<typeof createPorts>,
  scope: RuntimeResourceScope,
  signal: AbortSignal,
): Promise<void> {
  await ports.sandbox.capabilities(scope);
  await ports.workspace.capabilities(scope);
  await ports.outputs.capabilities(scope);
  await ports.harnessDriver.driverCapabilities(scope);
  await ports.credentialEgress.capabilities(scope);
  const acquired = await ports.fences.acquire({ scope, ownerId: "bench", ttlMs: 60_000 });
  if (acquired.type !== "acquired") throw new Error("conflict");
  const fence = acquired.fence;
  const idempotencyKey = "key";
  const workspace = await ports.workspace.materialize({
    scope,
    fence,
    strategy: "checkpoint_restore",
    activeCheckpoint: null,
    idempotencyKey,
    signal,
  });
  const outputs = await ports.outputs.prepare({
    scope,
    fence,
    strategy: "final_collect",
    idempotencyKey,
    signal,
  });
  const binding = await ports.credentialEgress.prepare({
    scope,
    fence,
    requirement: "required",
    idempotencyKey,
    signal,
  });
  if (!binding) throw new Error("no binding");
  const plan = {
    workspaceStrategy: "checkpoint_restore",
    outputStrategy: "final_collect",
    runtimeCheckpoint: null,
    driver: "ama_worker",
  } as const;
  const lease = await ports.sandbox.acquire({
    scope,
    fence,
    plan,
    workspace,
    outputs,
    credentialEgress: binding,
    signal,
  });
  await ports.workspace.attach({ scope, fence, binding: workspace, sandbox: lease, signal });
  await ports.outputs.attach({
    scope,
    fence,
    strategy: "final_collect",
    binding: outputs,
    sandbox: lease,
    signal,
  });
  await ports.credentialEgress.attach({ scope, fence, binding, sandbox: lease, signal });
  await ports.harnessDriver.run({
    scope,
    fence,
    sandbox: lease,
    workspacePath: "/workspace",
    outputPath: "/mnt/session/outputs",
    driver: profile.driver,
    signal,
  });
  const candidate = await ports.workspace.checkpoint({
    scope,
    fence,
    binding: workspace,
    sandbox: lease,
    idempotencyKey,
    signal,
  });
  const entries = await ports.outputs.collect({
    scope,
    fence,
    strategy: "final_collect",
    binding: outputs,
    sandbox: lease,
    signal,
  });
  const manifest = await ports.outputs.finalize({
    scope,
    fence,
    binding: outputs,
    sandbox: lease,
    entries,
    idempotencyKey,
    signal,
  });
  await ports.fences.publish({ fence, workspaceCandidate: candidate, outputCandidate: manifest });
  await ports.credentialEgress.revoke({ scope, fence, binding, reason: "completed" });
  await ports.sandbox.terminate({ scope, fence, lease, reason: "completed" });
  await ports.outputs.release({ scope, fence, binding: outputs });
  await ports.credentialEgress.release({ scope, fence, binding });
  await ports.workspace.release({ scope, fence, binding: workspace });
  await ports.fences.release({ fence, reason: "completed" });
}

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

async function timeEach(count: number, body: (index: number) => Promise<void>): Promise<number[]> {
  const samples: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const start = performance.now();
    await body(index);
    samples.push(performance.now() - start);
  }
  return samples.sort((a, b) => a - b);
}

async function overhead(): Promise<void> {
  const ports = createPorts();
  const host = createManagedRuntimeHost({
    ownerId: "bench",
    leaseTtlMs: 60_000,
    heartbeatIntervalMs: 10_000,
    ...ports,
  });
  const signal = new AbortController().signal;
  const runHost = async (index: number) => {
    const result = await host.run({ scope: scopeOf(index), profile });
    if (result.type !== "completed") throw new Error(`work item ended ${result.type}`);
  };
  await timeEach(WARMUP, runHost);
  await timeEach(WARMUP, (index) => bareCalls(ports, scopeOf(ITEMS + index), signal));
  const hosted = await timeEach(ITEMS, (index) => runHost(WARMUP + index));
  const bare = await timeEach(ITEMS, (index) =>
    bareCalls(ports, scopeOf(2 * ITEMS + index), signal),
  );
  const row = (name: string, samples: readonly number[]) =>
    `${name.padEnd(34)} p50 ${percentile(samples, 0.5).toFixed(3).padStart(7)} ms   p99 ${percentile(samples, 0.99).toFixed(3).padStart(7)} ms`;
  console.log(`Transaction overhead per work item (${ITEMS} sequential items, 29 port calls each)`);
  console.log(row("host.run (fenced transaction)", hosted));
  console.log(row("baseline: same calls, bare awaits", bare));
  console.log(
    `ratio host/baseline                p50 ${(percentile(hosted, 0.5) / percentile(bare, 0.5)).toFixed(1)}x   p99 ${(percentile(hosted, 0.99) / percentile(bare, 0.99)).toFixed(1)}x` +
      `   (target: host p50 < 1 ms)`,
  );
}

async function concurrency(): Promise<void> {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) console.log("(run node with --expose-gc for a clean heap baseline)");
  collect?.();
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 2);
  const ports = createPorts(250);
  const host = createManagedRuntimeHost({
    ownerId: "bench",
    leaseTtlMs: 60_000,
    heartbeatIntervalMs: 10_000,
    ...ports,
  });
  const start = performance.now();
  const results = await Promise.all(
    Array.from({ length: CONCURRENT }, (_, index) => host.run({ scope: scopeOf(index), profile })),
  );
  const elapsed = performance.now() - start;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  const completed = results.filter((result) => result.type === "completed").length;
  console.log(`\n${CONCURRENT} concurrent work items (each harness holds its sandbox 250 ms)`);
  console.log(`completed ${completed}/${CONCURRENT} in ${elapsed.toFixed(0)} ms`);
  console.log(
    `heap before ${(before / MiB).toFixed(1)} MiB, peak ${(peak / MiB).toFixed(1)} MiB, peak growth ${((peak - before) / MiB).toFixed(1)} MiB (target: < 64 MiB)`,
  );
}

await overhead();
await concurrency();
