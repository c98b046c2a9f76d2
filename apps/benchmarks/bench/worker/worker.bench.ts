/**
 * Environment worker benchmark, run with `pnpm bench:worker`. Prints figures; asserts nothing.
 *
 * Each item is one session turn with one `bash` call, claimed from the local control plane:
 * - measured: the environment worker, the host over the conformance reference driver (bubblewrap-confined
 *   local processes), `oma-ama-worker` in the sandbox;
 * - baseline, in the same process tree: the SDK's WorkPoller claims and `oma-ama-worker` runs as a plain child
 *   process, no host and no sandbox.
 * Figures: claim → first tool result, claim → item done, and the measured run split into the worker's own
 * overhead, the host's transaction, the sandbox's acquire/terminate and the harness.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { runPlainWorker } from "../shared/plain-worker.js";

process.env.NODE_ENV = "test";
const ITEMS = Number(process.env.OMA_BENCH_ITEMS ?? 5);
const IDLE_MS = 300;

const { default: Anthropic } = await import("@anthropic-ai/sdk");
const { installAmaWorkerBin } = await import("@open-managed-agents/ama-worker");
const { startLocalControlPlane } = await import("@open-managed-agents/local-control-plane");
const { REFERENCE_PROVIDER, createReferenceManagedRuntimeDriver } = await import(
  "@open-managed-agents/managed-runtime-conformance/testing"
);
const {
  createManagedRuntimeHost,
  createManagedRuntimeProviderRegistry,
  createMemoryFencePort,
  createMemoryOrphanPort,
} = await import("@open-managed-agents/managed-runtime-host");
const { createManagedEnvironmentWorker } = await import(
  "@open-managed-agents/managed-environment-worker"
);

const bin = await installAmaWorkerBin(process.env.OMA_AMA_WORKER_BIN_DIR);
const BIN_DIRECTORY = dirname(bin);
process.env.PATH = `${BIN_DIRECTORY}:${process.env.PATH ?? ""}`;
const plane = await startLocalControlPlane();
const rootDir = await mkdtemp(join(tmpdir(), "oma-bench-worker-"));

interface Sample {
  firstToolMs: number;
  doneMs: number;
  hostMs?: number;
  sandboxMs?: number;
  harnessMs?: number;
}

const firstAnswer = (sessionId: string): number => {
  const answered = plane.transcript(sessionId).entries[0]?.answered_at;
  return answered ? Date.parse(answered) : Number.NaN;
};

/** Queues `count` one-call turns in fresh sessions of `environmentId`. */
function queueItems(environmentId: string, count: number): string[] {
  return Array.from({ length: count }, () => {
    const session = plane.createSession({ environmentId });
    plane.queueTurn(session.id, { toolCalls: [{ name: "bash", input: { command: "true" } }] });
    return session.id;
  });
}

async function measured(): Promise<Sample[]> {
  const environment = plane.createEnvironment({ name: "bench-measured" });
  const client = new Anthropic({ baseURL: plane.url, apiKey: null, authToken: null });
  const registry = createManagedRuntimeProviderRegistry({
    drivers: [createReferenceManagedRuntimeDriver({ rootDir })],
  });
  const fences = createMemoryFencePort();
  const orphans = createMemoryOrphanPort();
  const claimedAt = new Map<string, number>();
  const shares = new Map<string, { host: number; sandbox: number; harness: number }>();
  const samples: Sample[] = [];
  const timed = <T extends object>(
    port: T,
    workId: string,
    share: "sandbox" | "harness",
    methods: readonly string[],
  ): T =>
    new Proxy(port, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== "function" || !methods.includes(String(property))) return value;
        return async (...args: unknown[]) => {
          const started = performance.now();
          try {
            return await (value as (...input: unknown[]) => unknown).apply(target, args);
          } finally {
            const entry = shares.get(workId);
            if (entry) entry[share] += performance.now() - started;
          }
        };
      },
    });
  const worker = createManagedEnvironmentWorker({
    client,
    environmentId: environment.id,
    environmentKey: environment.environmentKey,
    workspaceId: "bench",
    profileFor: () => ({
      workspace: { requirement: "durable" },
      outputs: { requirement: "disabled" },
      runtimeCheckpoint: "disabled",
      driver: {
        type: "ama_worker",
        process: {
          command: "oma-ama-worker",
          env: { PATH: `${BIN_DIRECTORY}:/usr/bin:/bin`, OMA_AMA_MAX_IDLE_MS: String(IDLE_MS) },
        },
      },
    }),
    logger: {
      info(event, fields) {
        if (event === "work.claimed" && typeof fields.workId === "string")
          claimedAt.set(fields.workId, Date.now());
      },
      warn() {},
      error() {},
    },
    async host({ scope, profile }) {
      const { resources } = await registry.prepare({
        provider: REFERENCE_PROVIDER,
        placement: "in_process",
        scope,
        profile,
        providerConfig: {},
      });
      shares.set(scope.workId, { host: 0, sandbox: 0, harness: 0 });
      const host = createManagedRuntimeHost({
        ownerId: "bench",
        leaseTtlMs: 60_000,
        heartbeatIntervalMs: 10_000,
        fences,
        orphans,
        ...resources,
        supervisorTransport: undefined,
        sandbox: timed(resources.sandbox, scope.workId, "sandbox", ["acquire", "terminate"]),
        harnessDriver: timed(resources.harnessDriver, scope.workId, "harness", ["run"]),
      } as never);
      return {
        async run(input) {
          const started = performance.now();
          try {
            return await host.run(input);
          } finally {
            const entry = shares.get(scope.workId);
            if (entry) entry.host += performance.now() - started;
          }
        },
      };
    },
    onRunResult(report) {
      const claimed = claimedAt.get(report.workId) ?? Number.NaN;
      const share = shares.get(report.workId);
      samples.push({
        firstToolMs: firstAnswer(report.scope?.sessionId ?? "") - claimed,
        doneMs: Date.now() - claimed,
        ...(share
          ? { hostMs: share.host, sandboxMs: share.sandbox, harnessMs: share.harness }
          : {}),
      });
    },
  });
  queueItems(environment.id, ITEMS);
  // One item at a time, so each figure is one item's latency, not a queue's.
  for (let index = 0; index < ITEMS; index += 1) await worker.drain();
  return samples;
}

async function baseline(): Promise<Sample[]> {
  const environment = plane.createEnvironment({ name: "bench-baseline" });
  const client = new Anthropic({ baseURL: plane.url, apiKey: null, authToken: null });
  const sessions = queueItems(environment.id, ITEMS);
  const samples: Sample[] = [];
  const workdir = await mkdtemp(join(tmpdir(), "oma-bench-baseline-"));
  for (const _session of sessions) {
    const poller = client.beta.environments.work.poller({
      environmentId: environment.id,
      environmentKey: environment.environmentKey,
      autoStop: false,
      drain: true,
      blockMs: null,
    });
    for await (const work of poller) {
      const claimed = Date.now();
      await runPlainWorker({ bin, work, baseUrl: plane.url, workdir, idleMs: IDLE_MS });
      samples.push({
        firstToolMs: firstAnswer(work.data.id) - claimed,
        doneMs: Date.now() - claimed,
      });
      break;
    }
  }
  await rm(workdir, { recursive: true, force: true });
  return samples;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.floor((sorted.length - 1) / 2)] as number);
};
const ms = (value: number) => `${value.toFixed(0).padStart(6)} ms`;

try {
  const base = await baseline();
  const run = await measured();
  const pick = (samples: Sample[], key: keyof Sample) =>
    median(samples.map((sample) => sample[key] ?? Number.NaN));
  const done = pick(run, "doneMs");
  const host = pick(run, "hostMs");
  const sandbox = pick(run, "sandboxMs");
  const harness = pick(run, "harnessMs");
  process.stdout.write(
    `environment worker benchmark: ${ITEMS} items of one bash call each, medians (idle cut-off ${IDLE_MS} ms in both)\n\n`,
  );
  process.stdout.write(`                                   baseline    measured   ratio\n`);
  process.stdout.write(
    `  claim → first tool result       ${ms(pick(base, "firstToolMs"))}  ${ms(pick(run, "firstToolMs"))}   ${(pick(run, "firstToolMs") / pick(base, "firstToolMs")).toFixed(2)}x\n`,
  );
  process.stdout.write(
    `  claim → item done               ${ms(pick(base, "doneMs"))}  ${ms(done)}   ${(done / pick(base, "doneMs")).toFixed(2)}x\n\n`,
  );
  process.stdout.write(`  measured item, split (median)\n`);
  process.stdout.write(
    `    environment worker's own    ${ms(done - host)}   ${(((done - host) / done) * 100).toFixed(1)}%  (secret, session retrieve, profile, report)\n`,
  );
  process.stdout.write(
    `    host transaction            ${ms(host - sandbox - harness)}   ${(((host - sandbox - harness) / done) * 100).toFixed(1)}%  (fence, workspace, checkpoint, publish, release)\n`,
  );
  process.stdout.write(
    `    sandbox acquire+terminate   ${ms(sandbox)}   ${((sandbox / done) * 100).toFixed(1)}%  (incl. readiness probe)\n`,
  );
  process.stdout.write(
    `    harness (AMA worker)        ${ms(harness)}   ${((harness / done) * 100).toFixed(1)}%  (SDK start, tool call, idle cut-off, stop)\n`,
  );
} finally {
  await plane.stop();
  await rm(rootDir, { recursive: true, force: true });
}
