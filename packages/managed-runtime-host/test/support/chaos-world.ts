import Database from "better-sqlite3";
import { inspect } from "node:util";
import type {
  HarnessRunInput,
  ManagedRuntimeProfile,
  ManagedWorkExecutionResult,
  RuntimeSessionSnapshot,
} from "@open-managed-agents/runtime-resource-contract";
import { createManagedRuntimeHost } from "../../src/host/create-host.js";
import type { ManagedRuntimeRunResult } from "../../src/host/types.js";
import { applyMigrations } from "../../src/sql/apply-migrations.js";
import { createBetterSqliteClient } from "../../src/sql/better-sqlite-client.js";
import type { SqlClient } from "../../src/sql/sql-client.js";
import { createSqlFencePort } from "../../src/sql/sql-fence-port.js";
import {
  type FakeHostDependencies,
  createFakeHostDependencies,
} from "../../src/testing/fake-runtime.js";
import { type FaultKind, createFaultPlan } from "../../src/testing/faults.js";
import { type RecordingLogger, createRecordingLogger } from "../../src/testing/recording-logger.js";
import { type Clock, type Scheduler, createManualTime } from "../../src/time.js";
import { amaProfile } from "./fixture.js";
import {
  duplicatePublishCalls,
  egressOrderViolations,
  leakedTokens,
  tokensOf,
  unaccountedRuntimes,
} from "./invariants.js";
import { type Random, createRandom } from "./prng.js";
import {
  type FenceStoreEvent,
  fencingViolations,
  observeFenceStatements,
} from "./sqlite-observer.js";

const LEASE_TTL_MS = 20_000;
const HEARTBEAT_MS = 5_000;
const MAX_SKEW_MS = 4_000;
const SESSIONS = ["ses-a", "ses-b"];

/** Every port call after the fence is taken: the boundaries a fault is injected at. */
const BOUNDARIES: readonly (readonly [string, string, number])[] = [
  ["workspace", "materialize", 1],
  ["outputs", "prepare", 1],
  ["credentialEgress", "prepare", 1],
  ["runtimeCheckpoint", "restore", 1],
  ["sandbox", "acquire", 1],
  ["workspace", "attach", 1],
  ["outputs", "attach", 1],
  ["credentialEgress", "attach", 1],
  ["sessionInputs", "materialize", 1],
  ["fences", "isCurrent", 1],
  ["harnessDriver", "run", 1],
  ["sessionInputs", "synchronize", 1],
  ["workspace", "checkpoint", 1],
  ["workspace", "checkpoint", 2],
  ["runtimeCheckpoint", "create", 1],
  ["outputs", "collect", 1],
  ["outputs", "finalize", 1],
  ["fences", "publish", 1],
  ["fences", "publish", 2],
  ["fences", "acquire", 2],
  ["fences", "renew", 1],
  ["fences", "renew", 3],
  ["sandbox", "heartbeat", 1],
  ["sandbox", "heartbeat", 2],
  ["credentialEgress", "revoke", 1],
  ["sandbox", "terminate", 1],
  ["outputs", "release", 1],
  ["outputs", "abort", 1],
  ["credentialEgress", "release", 1],
  ["workspace", "release", 1],
  ["fences", "release", 1],
];

const profile: ManagedRuntimeProfile = { ...amaProfile, runtimeCheckpoint: "optional" };

interface Owner {
  readonly label: string;
  readonly deps: FakeHostDependencies;
  readonly logger: RecordingLogger;
  readonly results: ManagedRuntimeRunResult[];
}

/**
 * The fence store a seed's owners share: its client, the store's own history of fence acquires and publishes (in
 * the order the store applied them), and a wait for its calls in flight (none for a synchronous store).
 */
export interface ChaosStore {
  readonly client: SqlClient;
  events(): Promise<readonly FenceStoreEvent[]>;
  settle(): Promise<void>;
  close(): Promise<void>;
}

/** An in-memory SQLite store; better-sqlite3 is synchronous, so its statements' order is observed as they run. */
export async function sqliteChaosStore(): Promise<ChaosStore> {
  const events: FenceStoreEvent[] = [];
  const client = createBetterSqliteClient(observeFenceStatements(new Database(":memory:"), events));
  await applyMigrations(client);
  return {
    client,
    events: async () => events,
    settle: async () => undefined,
    close: async () => undefined,
  };
}

/** Runs one seeded schedule of several owners sharing one fence store; returns every invariant violation. */
export async function runChaosSeed(seed: number, store?: ChaosStore): Promise<string[]> {
  const random = createRandom(seed);
  const time = createManualTime();
  const shared = store ?? (await sqliteChaosStore());
  const { client } = shared;

  // The hosts sleep on a counting view of the shared time, so timers they leave behind are visible.
  const scheduler = countingScheduler(time);
  const owners: Owner[] = [];
  const runs: Promise<void>[] = [];
  for (let index = 0, count = random.int(2, 4); index < count; index += 1) {
    const offset = random.int(-MAX_SKEW_MS, MAX_SKEW_MS);
    const clock: Clock = { now: () => time.now() + offset };
    const owner = createOwner(
      `owner-${index}`,
      clock,
      random,
      time,
      scheduler,
      createSqlFencePort({ client, clock }),
    );
    owners.push(owner);
    for (let run = 0, runsOfOwner = random.int(1, 3); run < runsOfOwner; run += 1)
      runs.push(startRun(owner, random, time));
  }

  let settled = false;
  const all = Promise.all(runs).finally(() => {
    settled = true;
  });
  for (let step = 0; !settled; step += 1) {
    if (step > 2_000)
      return [`seed ${seed}: runs still pending after ${step} steps`, ...pendingCalls(owners)];
    // A server store's answers take real time: the clock moves only once the calls in flight are answered.
    await shared.settle();
    await time.advance(random.int(500, 6_000));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  await all;
  // Let calls the hosts stopped waiting for finish, as they would in production, before judging the world.
  await shared.settle();
  await time.advance(60_000);
  await new Promise<void>((resolve) => setImmediate(resolve));
  await shared.settle();
  return checkWorld(owners, await shared.events(), scheduler.pending());
}

function createOwner(
  label: string,
  clock: Clock,
  random: Random,
  time: ReturnType<typeof createManualTime>,
  scheduler: Scheduler,
  fences: ReturnType<typeof createSqlFencePort>,
): Owner {
  const deps = createFakeHostDependencies({
    provider: `${label}-provider`,
    fences,
    clock,
    faults: createFaultPlan({ scheduler: time }),
    runtimeCheckpoint: true,
    sessionInputs: true,
    sandboxCapabilities: {
      suspendResume: "unsupported",
      hardTerminate: "supported",
      runtimeCheckpoints: ["process"],
    },
    harness: { scheduler: time, script: (input) => harnessScript(input, random, time) },
  });
  if (random.chance(0.7)) {
    const [port, method, occurrence] = random.pick(BOUNDARIES);
    const kind = random.pick<FaultKind>(["throw", "hang", "delay"]);
    deps.faults.add({ port, method, kind, occurrence, delayMs: random.int(1_000, 25_000) });
  }
  const logger = createRecordingLogger();
  const host = createManagedRuntimeHost({
    ownerId: label,
    leaseTtlMs: LEASE_TTL_MS,
    heartbeatIntervalMs: HEARTBEAT_MS,
    callTimeoutMs: 6_000,
    cleanupTimeoutMs: 3_000,
    sessionInputSyncIntervalMs: 4_000,
    ...deps.ports,
    clock,
    scheduler,
    logger,
  });
  return Object.assign({ label, deps, logger, results: [] }, { host });
}

async function startRun(
  owner: Owner,
  random: Random,
  time: ReturnType<typeof createManualTime>,
): Promise<void> {
  const { host } = owner as Owner & { host: ReturnType<typeof createManagedRuntimeHost> };
  await time.sleep(random.int(0, 30_000));
  const sessionId = random.pick(SESSIONS);
  const scope = {
    workspaceId: "wsp",
    environmentId: "env",
    sessionId,
    workId: `work-${random.int(1, 3)}`,
  };
  const session: RuntimeSessionSnapshot = {
    id: sessionId,
    environmentId: "env",
    metadata: {},
    resources: [{ type: "file", fileId: "f" }],
  };
  // Every work item has a deadline, like a claimed item in production; some callers give up much earlier.
  const controller = new AbortController();
  const finished = new AbortController();
  const deadline = random.chance(0.15) ? random.int(1_000, 40_000) : 180_000;
  time.sleep(deadline, finished.signal).then(
    () => controller.abort(),
    () => undefined,
  );
  owner.results.push(await host.run({ scope, profile, session, signal: controller.signal }));
  finished.abort();
}

/** Works for a random time, asking for up to two live checkpoints; a rejected checkpoint fails it. */
async function harnessScript(
  input: HarnessRunInput,
  random: Random,
  time: ReturnType<typeof createManualTime>,
): Promise<ManagedWorkExecutionResult> {
  for (let index = 0, count = random.int(0, 2); index < count; index += 1) {
    try {
      await time.sleep(random.int(0, 10_000), input.signal);
    } catch {
      return { type: "aborted" };
    }
    await input.checkpoint?.({ checkpointId: `cp-${index}`, sessionId: input.scope.sessionId });
  }
  try {
    await time.sleep(random.int(0, 20_000), input.signal);
  } catch {
    return { type: "aborted" };
  }
  return { type: "completed" };
}

async function checkWorld(
  owners: readonly Owner[],
  events: readonly FenceStoreEvent[],
  pendingTimers: number,
): Promise<string[]> {
  const problems: string[] = [];
  if (!events.some((event) => event.kind === "acquire"))
    problems.push("the fence-store observer saw no acquire");
  problems.push(...fencingViolations(events));
  problems.push(...duplicatePublishCalls(owners.map((owner) => owner.deps.journal)));
  if (pendingTimers > 0)
    problems.push(`${pendingTimers} timers still pending after every run ended`);

  const tokens = owners.flatMap((owner) => tokensOf(owner.deps.journal));
  const texts: string[] = [];
  for (const owner of owners) {
    const orphans = await owner.deps.orphanStore.list({ limit: 1_000 });
    const evidence = {
      label: owner.label,
      journal: owner.deps.journal,
      sandbox: owner.deps.sandbox,
      orphans,
      retained: new Set<string>(),
      reportedLeaks: new Set<string>(),
    };
    problems.push(...unaccountedRuntimes(evidence), ...egressOrderViolations(evidence));
    texts.push(
      JSON.stringify(owner.results),
      inspect(owner.results, { depth: Infinity }),
      JSON.stringify(orphans),
      owner.logger.serialized(),
    );
    for (const result of owner.results) {
      if (result.type === "failed" && typeof result.error.context.stage !== "string")
        problems.push(`${owner.label}: failure without a stage: ${result.error.message}`);
      if (result.type === "lease_lost" && typeof result.error.context.trigger !== "string")
        problems.push(`${owner.label}: lease loss without a trigger`);
      if (
        result.type === "completed" &&
        !events.some(
          (event) =>
            event.kind === "publish" &&
            event.owner === owner.label &&
            event.generation === result.generation,
        )
      ) {
        problems.push(
          `${owner.label}: completed generation ${result.generation} without a publish in the store`,
        );
      }
    }
  }
  problems.push(...leakedTokens(tokens, texts));
  return problems;
}

/** Port calls still pending, per owner: what a stuck run waits for. */
function pendingCalls(owners: readonly Owner[]): string[] {
  return owners.flatMap((owner) =>
    owner.deps.journal.calls
      .filter((call) => call.status === "pending")
      .map(
        (call) =>
          `${owner.label}: ${call.port}.${call.method} #${call.occurrence} pending; faults ${JSON.stringify(owner.deps.faults.rules)}`,
      ),
  );
}

/** A scheduler over `inner` that counts its own pending sleeps. */
function countingScheduler(inner: Scheduler): Scheduler & { pending(): number } {
  let pending = 0;
  return {
    pending: () => pending,
    sleep(ms, signal) {
      pending += 1;
      return inner.sleep(ms, signal).finally(() => {
        pending -= 1;
      });
    },
  };
}
