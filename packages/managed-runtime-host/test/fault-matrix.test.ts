/**
 * For every port call the host makes in four scenarios (fresh run, runtime-checkpoint restore, retained
 * runtime, failing terminate), one case where that call throws and one where it hangs until aborted.
 * The calls come from a fault-free baseline run of each scenario, so a port call added to the host
 * gets its cases without editing this file.
 */
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import type {
  ManagedRuntimeProfile,
  RuntimeResourceFence,
  RuntimeSessionSnapshot,
} from "@open-managed-agents/runtime-resource-contract";
import type { ManagedRuntimeRunResult } from "../src/host/types.js";
import type { FakeManagedRuntimeOptions } from "../src/testing/fake-runtime.js";
import type { FaultKind, FaultRule } from "../src/testing/faults.js";
import { settleWithManualTime } from "../src/testing/manual-drive.js";
import { amaProfile, createHostFixture, scope, serializedOutputs } from "./support/fixture.js";
import {
  duplicatePublishCalls,
  egressOrderViolations,
  leakedTokens,
  tokensOf,
  unaccountedRuntimes,
} from "./support/invariants.js";

interface Scenario {
  readonly name: string;
  readonly runtime: FakeManagedRuntimeOptions;
  readonly profile: ManagedRuntimeProfile;
  readonly session?: RuntimeSessionSnapshot;
  /** Fault-free runs of other work items first, so a publication exists. */
  readonly priorRuns?: number;
  /** Faults present in every case of the scenario, the baseline included. */
  readonly baseFaults?: readonly FaultRule[];
  /** Only calls of these methods get cases. */
  readonly only?: readonly string[];
}

const checkpointing = {
  suspendResume: "supported",
  hardTerminate: "supported",
  runtimeCheckpoints: ["process"],
} as const;
const full: FakeManagedRuntimeOptions = {
  runtimeCheckpoint: true,
  sessionInputs: true,
  sandboxCapabilities: checkpointing,
  harness: { checkpoints: ["cp-1"], durationMs: 25_000 },
};
const fullProfile: ManagedRuntimeProfile = { ...amaProfile, runtimeCheckpoint: "optional" };
const session: RuntimeSessionSnapshot = {
  id: "ses-1",
  environmentId: "env-1",
  metadata: {},
  resources: [{ type: "file", fileId: "file-1" }],
};

const scenarios: readonly Scenario[] = [
  { name: "fresh run", runtime: full, profile: fullProfile, session },
  { name: "restore", runtime: full, profile: fullProfile, session, priorRuns: 1 },
  {
    name: "retained runtime",
    runtime: {
      ...full,
      workspaceStrategies: ["retained_runtime"],
      runtimeCheckpoint: false,
      sandboxCapabilities: { ...checkpointing, runtimeCheckpoints: [] },
    },
    profile: { ...amaProfile, workspace: { requirement: "continuable" } },
    session,
  },
  {
    name: "failing terminate",
    runtime: full,
    profile: fullProfile,
    session,
    baseFaults: [{ port: "sandbox", method: "terminate", kind: "throw" }],
    only: ["orphans.enqueue"],
  },
];

/** Cleanup calls: their failure must never change the result. */
const CLEANUP_METHODS = new Set([
  "credentialEgress.revoke",
  "credentialEgress.release",
  "sandbox.terminate",
  "outputs.release",
  "outputs.abort",
  "workspace.release",
  "fences.release",
  "orphans.enqueue",
]);
/**
 * Failures that may leave the run completed by design, named in a warning instead: optional steps that
 * fall through (a hung runtime-checkpoint create times out), and the last renewal or heartbeat, still
 * unanswered when the run finished.
 */
const NAMED_IN_LOGS = new Set([
  "runtimeCheckpoint.restore:throw",
  "runtimeCheckpoint.create:throw",
  "runtimeCheckpoint.create:hang",
  "fences.renew:hang",
  "sandbox.heartbeat:hang",
]);

const PORT_STAGE: Record<string, string> = {
  fences: "fence",
  orphans: "orphan",
  sandbox: "sandbox",
  workspace: "workspace",
  outputs: "outputs",
  harnessDriver: "harness-driver",
  runtimeCheckpoint: "runtime-checkpoint",
  credentialEgress: "credential-egress",
  sessionInputs: "session-inputs",
};

/** The stage name(s) the host uses for a port method. */
function stagePattern(port: string, method: string): RegExp {
  if (port === "harnessDriver")
    return method === "run" ? /harness-run/ : /harness-driver-capabilities/;
  if (port === "fences" && method === "acquire") return /fence-(acquire|rotate)/;
  const kebab = method.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
  return new RegExp(`${PORT_STAGE[port]}-${kebab}`);
}

async function execute(scenario: Scenario, fault: FaultRule | null) {
  const fixture = createHostFixture({ runtime: scenario.runtime });
  for (let index = 0; index < (scenario.priorRuns ?? 0); index += 1) {
    const prior = await fixture.run({
      profile: scenario.profile,
      scope: { ...scope, workId: `prior-${index}` },
    });
    if (prior.type !== "completed") throw new Error(`prior run ended ${prior.type}`);
  }
  const priorTokens = tokensOf(fixture.journal);
  fixture.journal.clear();
  for (const rule of scenario.baseFaults ?? []) fixture.deps.faults.add(rule);
  if (fault) fixture.deps.faults.add(fault);

  const controller = new AbortController();
  const publishWasCurrent: boolean[] = [];
  let step = 0;
  let hitStep = -1;
  fixture.journal.onCall((call) => {
    if (call.port === "fences" && call.method === "publish") {
      void fixture.deps.fenceStore
        .isCurrent((call.input as { fence: RuntimeResourceFence }).fence)
        .then((current) => publishWasCurrent.push(current));
    }
    if (
      fault &&
      call.port === fault.port &&
      call.method === fault.method &&
      call.occurrence === fault.occurrence &&
      hitStep < 0
    )
      hitStep = step;
  });
  const result = await settleWithManualTime(
    fixture.host.run({
      scope,
      profile: scenario.profile,
      ...(scenario.session ? { session: scenario.session } : {}),
      signal: controller.signal,
    }),
    fixture.time,
    {
      stepMs: 1_000,
      maxSteps: 400,
      onStep: (current) => {
        step = current;
        // Monitor and cleanup calls have deadlines of their own; only a hung transaction call needs the caller to give up.
        if (fault?.kind === "hang" && hitStep >= 0 && current >= hitStep + 15) controller.abort();
      },
    },
  );
  return {
    fixture,
    result,
    tokens: [...priorTokens, ...tokensOf(fixture.journal)],
    publishWasCurrent,
    hit: hitStep >= 0,
  };
}

const baselines = await Promise.all(
  scenarios.map(async (scenario) => {
    const { fixture, result } = await execute(scenario, null);
    const calls = fixture.journal.calls
      .filter((call) => !scenario.only || scenario.only.includes(`${call.port}.${call.method}`))
      .map((call) => ({ port: call.port, method: call.method, occurrence: call.occurrence }));
    return { scenario, result, calls };
  }),
);

const cases = baselines.flatMap(({ scenario, calls }) =>
  calls.flatMap((call) =>
    (["throw", "hang"] as const satisfies readonly FaultKind[]).map((kind) => ({
      title: `${scenario.name}: ${call.port}.${call.method} #${call.occurrence} ${kind === "throw" ? "throws" : "hangs"}`,
      scenario,
      fault: { ...call, kind } satisfies FaultRule,
    })),
  ),
);

describe("fault matrix", () => {
  it("covers every port method of the contract the host calls", () => {
    for (const { result } of baselines) expect(result.type).toBe("completed");
    const methods = new Set(cases.map(({ fault }) => `${fault.port}.${fault.method}`));
    expect([...methods].sort()).toEqual(
      [
        "credentialEgress.attach",
        "credentialEgress.capabilities",
        "credentialEgress.prepare",
        "credentialEgress.release",
        "credentialEgress.revoke",
        "fences.acquire",
        "fences.isCurrent",
        "fences.publish",
        "fences.release",
        "fences.renew",
        "harnessDriver.driverCapabilities",
        "harnessDriver.run",
        "orphans.enqueue",
        "outputs.attach",
        "outputs.capabilities",
        "outputs.collect",
        "outputs.finalize",
        "outputs.prepare",
        "outputs.release",
        "runtimeCheckpoint.create",
        "runtimeCheckpoint.restore",
        "sandbox.acquire",
        "sandbox.capabilities",
        "sandbox.heartbeat",
        "sandbox.suspend",
        "sandbox.terminate",
        "sessionInputs.materialize",
        "sessionInputs.synchronize",
        "workspace.attach",
        "workspace.capabilities",
        "workspace.checkpoint",
        "workspace.materialize",
        "workspace.release",
      ].sort(),
    );
    expect(cases.length).toBeGreaterThan(150);
  });

  it.each(cases)("$title", async ({ scenario, fault }) => {
    const { fixture, result, tokens, publishWasCurrent, hit } = await execute(scenario, fault);
    expect(hit).toBe(true);
    const name = `${fault.port}.${fault.method}`;
    const orphans = await fixture.deps.orphanStore.list({ limit: 100 });
    const leaks = new Set(
      fixture.logger.entries
        .filter((entry) => entry.event === "sandbox.leaked")
        .map((entry) => String(entry.fields.runtimeId)),
    );
    const retained = new Set(
      result.type === "completed" &&
        scenario.runtime.workspaceStrategies?.includes("retained_runtime")
        ? [...fixture.deps.sandbox.runtimes.values()]
            .filter((runtime) => runtime.state === "suspended")
            .map((runtime) => runtime.runtimeId)
        : [],
    );
    const owner = {
      label: "host",
      journal: fixture.journal,
      sandbox: fixture.deps.sandbox,
      orphans,
      retained,
      reportedLeaks: leaks,
    };

    // (1) every acquired sandbox is terminated or orphaned; a leak is only possible when the orphan queue itself fails, and is then reported.
    expect(unaccountedRuntimes(owner)).toEqual([]);
    if (fault.port !== "orphans") expect(leaks.size).toBe(0);
    // (2) egress revoked before terminate whenever attached.
    expect(egressOrderViolations(owner)).toEqual([]);
    // (3) no fence token in orphan records, errors, logs or the result.
    expect(leakedTokens(tokens, [await serializedOutputs(fixture, result)])).toEqual([]);
    // (4) publish at most once per generation, and only with a current fence.
    expect(duplicatePublishCalls([fixture.journal])).toEqual([]);
    expect(publishWasCurrent.every(Boolean)).toBe(true);
    // (5) the outcome names the failure.
    const pattern = stagePattern(fault.port, fault.method);
    if (CLEANUP_METHODS.has(name)) {
      expect(result.type).toBe("completed");
      expect(describeResult(result)).toMatch(pattern);
    } else if (NAMED_IN_LOGS.has(`${name}:${fault.kind}`) && result.type === "completed") {
      expect(
        fixture.logger.entries
          .filter((entry) => entry.level !== "info")
          .map((entry) => JSON.stringify(entry))
          .join("\n"),
      ).toMatch(pattern);
    } else {
      expect(["failed", "lease_lost"]).toContain(result.type);
      expect(describeResult(result)).toMatch(pattern);
    }
    // Nothing keeps running after the run returned.
    expect(fixture.time.pending()).toBe(0);
  });
});

function describeResult(result: ManagedRuntimeRunResult): string {
  return `${JSON.stringify(result)}\n${inspect(result, { depth: Infinity })}`;
}
