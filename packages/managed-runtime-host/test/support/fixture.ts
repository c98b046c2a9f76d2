import type {
  ManagedRuntimeProfile,
  OpenmaSupervisedDriverDeclaration,
  RuntimeResourceScope,
  SandboxHarnessDriverPort,
} from "@open-managed-agents/runtime-resource-contract";
import { inspect } from "node:util";
import { createManagedRuntimeHost } from "../../src/host/create-host.js";
import type {
  ManagedRuntimeHostOptions,
  ManagedRuntimeRunInput,
  ManagedRuntimeRunResult,
} from "../../src/host/types.js";
import {
  type FakeHostDependencies,
  type FakeManagedRuntimeOptions,
  createFakeHostDependencies,
} from "../../src/testing/fake-runtime.js";
import { createFaultPlan } from "../../src/testing/faults.js";
import type { CallJournal } from "../../src/testing/journal.js";
import { settleWithManualTime } from "../../src/testing/manual-drive.js";
import { type RecordingLogger, createRecordingLogger } from "../../src/testing/recording-logger.js";
import { type ManualTime, type Scheduler, createManualTime } from "../../src/time.js";

export const scope: RuntimeResourceScope = {
  workspaceId: "wsp-1",
  environmentId: "env-1",
  sessionId: "ses-1",
  workId: "work-1",
};

/** AMA worker lane, durable workspace and outputs, enforced egress, no runtime checkpoint. */
export const amaProfile: ManagedRuntimeProfile = {
  workspace: { requirement: "durable" },
  outputs: { requirement: "durable" },
  runtimeCheckpoint: "disabled",
  credentialEgress: { requirement: "required" },
  driver: {
    type: "ama_worker",
    process: {
      command: "/usr/local/bin/ama-worker",
      args: ["--work"],
      env: { API_KEY: "value-is-secret" },
    },
  },
};

/** The supervised lane: ready within 5 s, a heartbeat every 3 s, 2 s to drain. */
export const supervisedDriver: OpenmaSupervisedDriverDeclaration = {
  type: "openma_supervised",
  protocol: "openma-harness-supervisor-v1",
  supervisor: { command: "/usr/local/bin/supervisor" },
  harness: { id: "claude-code", version: "2.1.0" },
  readyTimeoutMs: 5_000,
  heartbeatTimeoutMs: 3_000,
  drainTimeoutMs: 2_000,
};

/** {@link amaProfile} on the supervised lane. */
export const supervisedProfile: ManagedRuntimeProfile = { ...amaProfile, driver: supervisedDriver };

export interface HostFixture {
  readonly time: ManualTime;
  readonly logger: RecordingLogger;
  readonly deps: FakeHostDependencies;
  readonly journal: CallJournal;
  readonly host: ReturnType<typeof createManagedRuntimeHost>;
  /** Runs one work item to its end on manual time. */
  run(input?: Partial<ManagedRuntimeRunInput>, stepMs?: number): Promise<ManagedRuntimeRunResult>;
}

/** A host over instrumented fakes and memory stores, on manual time. */
export function createHostFixture(
  options: {
    readonly runtime?: FakeManagedRuntimeOptions;
    readonly host?: Partial<ManagedRuntimeHostOptions>;
    /** The host's scheduler, built over the fixture's manual time. @default the manual time itself */
    readonly scheduler?: (time: ManualTime) => Scheduler;
    /** The host's harness driver, built over the fixture's manual time. @default the instrumented scripted harness */
    readonly harnessDriver?: (time: ManualTime) => SandboxHarnessDriverPort;
  } = {},
): HostFixture {
  const time = createManualTime();
  const logger = createRecordingLogger();
  const deps = createFakeHostDependencies({
    faults: createFaultPlan({ scheduler: time }),
    ...options.runtime,
    harness: { scheduler: time, ...options.runtime?.harness },
    clock: time,
  });
  const host = createManagedRuntimeHost({
    ownerId: "owner-a",
    leaseTtlMs: 30_000,
    heartbeatIntervalMs: 10_000,
    callTimeoutMs: 8_000,
    cleanupTimeoutMs: 5_000,
    sessionInputSyncIntervalMs: 4_000,
    ...deps.ports,
    clock: time,
    scheduler: options.scheduler?.(time) ?? time,
    ...(options.harnessDriver ? { harnessDriver: options.harnessDriver(time) } : {}),
    logger,
    ...options.host,
  });
  return {
    time,
    logger,
    deps,
    journal: deps.journal,
    host,
    run: (input = {}, stepMs = 1_000) =>
      settleWithManualTime(host.run({ scope, profile: amaProfile, ...input }), time, { stepMs }),
  };
}

/** `port.method` of every journal entry, in order, without the periodic monitor calls. */
export function callSequence(journal: CallJournal): string[] {
  return journal.calls
    .map((call) => `${call.port}.${call.method}`)
    .filter((name) => name !== "fences.renew" && name !== "sandbox.heartbeat");
}

/** Everything the host hands out or stores, serialised as deeply as a log sink or debugger would. */
export async function serializedOutputs(fixture: HostFixture, result: unknown): Promise<string> {
  const orphans = await fixture.deps.orphanStore.list({ limit: 1000 });
  return [
    JSON.stringify(result),
    inspect(result, { depth: Infinity }),
    JSON.stringify(orphans),
    fixture.logger.serialized(),
    inspect(fixture.logger.entries, { depth: Infinity }),
  ].join("\n");
}
