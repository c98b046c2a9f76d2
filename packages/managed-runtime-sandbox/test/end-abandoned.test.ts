import { join } from "node:path";
import {
  ManagedRuntimeError,
  type ManagedSandboxLease,
} from "@open-managed-agents/runtime-resource-contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shellFiles, shellcheck, shellcheckInstalled } from "../../../vitest.shellcheck.js";
import {
  amaProfile,
  checkpointPlan,
  fenceFor,
  localWorld,
  scopeFor,
  signal,
} from "./fixtures/world.js";

const world = localWorld();
const scopes = [scopeFor("work-a"), scopeFor("work-b")] as const;
const leases: ManagedSandboxLease[] = [];

beforeAll(async () => {
  for (const scope of scopes) {
    const fence = fenceFor(scope);
    const workspace = await world.runtime.workspace.materialize({
      scope,
      fence,
      strategy: "checkpoint_restore",
      activeCheckpoint: null,
      idempotencyKey: scope.workId,
      signal: signal(),
    });
    leases.push(
      await world.runtime.sandbox.acquire({
        scope,
        fence,
        plan: checkpointPlan,
        workspace,
        outputs: null,
        credentialEgress: null,
        signal: signal(),
      }),
    );
  }
});
afterAll(async () => {
  for (const [index, lease] of leases.entries()) {
    const scope = scopes[index as 0 | 1];
    await world.runtime.sandbox.terminate({
      scope,
      fence: fenceFor(scope),
      lease,
      reason: "completed",
    });
  }
});

// A harness that keeps a child writing a tick file, as an AMA worker keeps a tool call running.
const TICKING = "(while :; do date +%s%N > /workspace/tick; sleep 0.1; done) & wait";

const startHarness = (index: 0 | 1) =>
  world.runtime.harnessDriver
    .run({
      scope: scopes[index],
      fence: fenceFor(scopes[index]),
      sandbox: leases[index] as ManagedSandboxLease,
      workspacePath: "/workspace",
      outputPath: null,
      driver: amaProfile("sh", ["-c", TICKING]).driver,
      signal: signal(),
    })
    .then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );

const runtimeOf = (index: 0 | 1) =>
  world.provider.connect((leases[index] as ManagedSandboxLease).runtimeId, {
    sessionId: scopes[index].sessionId,
    workdir: "/workspace",
  });
const tick = async (index: 0 | 1) =>
  (await (await runtimeOf(index)).readFile("/workspace/tick")).trim();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// A loaded machine may delay a tick for long: a change is waited for up to 20 s, while no change is
// asserted over 1.5 s (a live loop ticks every 0.1 s, so that many missed ticks mean it has stopped).
const ticks = async (index: 0 | 1) => {
  const before = await tick(index);
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await sleep(100)) {
    if ((await tick(index)) !== before) return true;
  }
  return false;
};
const stopped = async (index: 0 | 1) => {
  const before = await tick(index);
  await sleep(1_500);
  return (await tick(index)) === before;
};

describe("endAbandoned", () => {
  it("ends a harness and the commands it started, in its runtime only, and keeps the runtime's files", async () => {
    const abandoned = startHarness(0);
    const neighbour = startHarness(1);
    for (const index of [0, 1] as const) {
      while ((await (await runtimeOf(index)).exec("test -s /workspace/tick")).exitCode !== 0)
        await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await ticks(0)).toBe(true);
    await world.runtime.harnessDriver.endAbandoned?.({
      scope: scopes[0],
      sandbox: leases[0] as ManagedSandboxLease,
    });
    // The harness died by a signal: its run reports that, as a host still waiting for it would see.
    const ended = await abandoned;
    expect("error" in ended && ManagedRuntimeError.hasCode(ended.error, "sandbox_failed")).toBe(
      true,
    );
    expect(await stopped(0)).toBe(true);
    expect(await tick(0)).toMatch(/^\d+$/);
    // The other runtime's harness goes on.
    expect(await ticks(1)).toBe(true);
    await world.runtime.harnessDriver.endAbandoned?.({
      scope: scopes[1],
      sandbox: leases[1] as ManagedSandboxLease,
    });
    await neighbour;
    // A runtime with no harness left: nothing to end, no error.
    await world.runtime.harnessDriver.endAbandoned?.({
      scope: scopes[0],
      sandbox: leases[0] as ManagedSandboxLease,
    });
  });

  it("refuses a foreign lease with provider_mismatch", async () => {
    const error = await world.runtime.harnessDriver
      .endAbandoned?.({
        scope: scopes[0],
        sandbox: { provider: "someone-else", runtimeId: "rt-1" },
      })
      .catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(error, "provider_mismatch")).toBe(true);
  });
});

describe("programs run in the sandbox", () => {
  const folder = join(import.meta.dirname, "../src/scripts");

  it("are shell files", () => {
    expect(shellFiles(folder)).toEqual(["end-harness.sh"]);
  });

  it.runIf(shellcheckInstalled).each(shellFiles(folder))("%s passes shellcheck", (name) =>
    shellcheck(join(folder, name)),
  );
});
