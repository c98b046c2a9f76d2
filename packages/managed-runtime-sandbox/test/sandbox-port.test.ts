import {
  ManagedRuntimeError,
  SandboxFailedError,
} from "@open-managed-agents/runtime-resource-contract";
import { rm } from "node:fs/promises";
import { describe, expect, it, onTestFinished } from "vitest";
import { HARNESS_VERSION_METADATA_KEY, createProviderManagedRuntime } from "../src/index.js";
import { createScriptedProvider } from "./fixtures/scripted-provider.js";
import {
  FENCE_TOKEN,
  amaProfile,
  baseOptions,
  checkpointPlan,
  fenceFor,
  localWorld,
  scopeFor,
  signal,
} from "./fixtures/world.js";

const scope = scopeFor();
const fence = fenceFor(scope);
const workspace = {
  bindingId: "ws",
  mountPath: "/workspace" as const,
  metadata: { "oma.workspace.strategy": "checkpoint_restore" },
};
const acquireInput = () => ({
  scope,
  fence,
  plan: checkpointPlan,
  workspace,
  outputs: null,
  credentialEgress: null,
  signal: signal(),
});

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!ManagedRuntimeError.isInstance(error))
    throw new Error(`expected a typed error, got ${String(error)}`);
  return error.code;
}

describe("sandbox port over the local-subprocess provider", () => {
  it("acquires a ready runtime whose lease names the provider and survives JSON", async () => {
    const { runtime, provider } = localWorld();
    const lease = await runtime.sandbox.acquire(acquireInput());
    expect(lease).toEqual({
      provider: provider.provider,
      runtimeId: expect.stringMatching(/^local-/),
    });
    expect(lease.provider).toBe(runtime.providerName);
    expect(await runtime.sandbox.heartbeat({ scope, fence, lease })).toEqual({ type: "alive" });
    expect(await runtime.sandbox.inspect(lease)).toEqual({ state: "running" });
    await runtime.sandbox.terminate({ scope, fence, lease, reason: "completed" });
    expect(await runtime.sandbox.inspect(lease)).toEqual({ state: "stopped" });
    expect(await runtime.sandbox.heartbeat({ scope, fence, lease })).toMatchObject({
      type: "lost",
    });
  });

  it("destroys the runtime and throws readiness_failed when the harness executable is missing", async () => {
    const { runtime, provider } = localWorld({ readiness: { command: "/opt/no-such-harness" } });
    expect(await codeOf(runtime.sandbox.acquire(acquireInput()))).toBe("readiness_failed");
    const { readdirSync } = await import("node:fs");
    expect(readdirSync(`${provider.rootDir}/runtimes`)).toEqual([]);
  });

  it("reaps twice from a serialized lease in a fresh composition", async () => {
    const world = localWorld();
    const lease = JSON.parse(JSON.stringify(await world.runtime.sandbox.acquire(acquireInput())));
    const elsewhere = createProviderManagedRuntime(world.options);
    await elsewhere.sandbox.reap({ scope, lease, reason: "lease_lost" });
    await elsewhere.sandbox.reap({ scope, lease, reason: "lease_lost" });
    expect(await world.runtime.sandbox.heartbeat({ scope, fence, lease })).toMatchObject({
      type: "lost",
    });
  });
});

describe("sandbox port failure paths (scripted provider)", () => {
  it("wraps a failed create as sandbox_failed and keeps typed provider errors", async () => {
    const plain = createProviderManagedRuntime(
      baseOptions(createScriptedProvider({ createError: new Error("quota exhausted") })),
    );
    const error = await plain.sandbox.acquire(acquireInput()).catch((caught: unknown) => caught);
    expect(SandboxFailedError.isInstance(error) && error.code).toBe("sandbox_failed");
    expect((error as Error).message).toContain("quota exhausted");
    const typed = createProviderManagedRuntime(
      baseOptions(
        createScriptedProvider({
          createError: ManagedRuntimeError.fromJSON({
            code: "insufficient_capacity",
            message: "full",
          }),
        }),
      ),
    );
    expect(await codeOf(typed.sandbox.acquire(acquireInput()))).toBe("insufficient_capacity");
  });

  it("refuses a runtime that reports another provider, and destroys it", async () => {
    const provider = createScriptedProvider({ runtimeProvider: "impostor" });
    const runtime = createProviderManagedRuntime(baseOptions(provider));
    expect(await codeOf(runtime.sandbox.acquire(acquireInput()))).toBe("provider_mismatch");
    expect(provider.runtimes.get("scripted-1")?.destroyCalls).toBe(1);
  });

  it("never returns a lease when the readiness probe fails", async () => {
    const provider = createScriptedProvider({ ready: false });
    const runtime = createProviderManagedRuntime(baseOptions(provider));
    expect(await codeOf(runtime.sandbox.acquire(acquireInput()))).toBe("readiness_failed");
    expect(provider.runtimes.get("scripted-1")?.destroyCalls).toBe(1);
  });

  it("reports lost when the runtime is stopped or its status throws, with the fence token redacted", async () => {
    const provider = createScriptedProvider();
    const runtime = createProviderManagedRuntime(baseOptions(provider));
    const lease = await runtime.sandbox.acquire(acquireInput());
    const state = provider.runtimes.get(lease.runtimeId)!;
    state.status = "stopped";
    expect(await runtime.sandbox.heartbeat({ scope, fence, lease })).toMatchObject({
      type: "lost",
    });
    state.status = new Error(`upstream 500 for ${FENCE_TOKEN}`);
    const lost = await runtime.sandbox.heartbeat({ scope, fence, lease });
    expect(lost.type).toBe("lost");
    expect(JSON.stringify(lost)).not.toContain(FENCE_TOKEN);
    state.status = "running";
    state.renewError = new Error("lease expired");
    expect(await runtime.sandbox.heartbeat({ scope, fence, lease })).toMatchObject({
      type: "lost",
    });
  });

  it("reconnects to a lease it does not hold, and reports lost when the provider no longer knows it", async () => {
    const provider = createScriptedProvider();
    const first = createProviderManagedRuntime(baseOptions(provider));
    const lease = await first.sandbox.acquire(acquireInput());
    const second = createProviderManagedRuntime(baseOptions(provider));
    expect(await second.sandbox.inspect(lease)).toEqual({ state: "unknown" });
    expect(await second.sandbox.heartbeat({ scope, fence, lease })).toEqual({ type: "alive" });
    expect(provider.calls.connect).toEqual([lease.runtimeId]);
    expect(
      await second.sandbox.heartbeat({
        scope,
        fence,
        lease: { ...lease, runtimeId: "scripted-404" },
      }),
    ).toMatchObject({ type: "lost" });
  });

  it("terminates idempotently for every reason, and a runtime the provider no longer knows is already gone", async () => {
    const provider = createScriptedProvider();
    const runtime = createProviderManagedRuntime(baseOptions(provider));
    const lease = await runtime.sandbox.acquire(acquireInput());
    for (const reason of ["completed", "failed", "lease_lost"] as const) {
      await runtime.sandbox.terminate({ scope, fence, lease, reason });
    }
    expect(provider.runtimes.get(lease.runtimeId)?.destroyCalls).toBe(1);
    const elsewhere = createProviderManagedRuntime(baseOptions(provider));
    for (const reason of ["completed", "failed", "lease_lost"] as const) {
      await elsewhere.sandbox.terminate({ scope, fence, lease, reason });
    }
    await expect(
      elsewhere.sandbox.reap({
        scope,
        lease: { ...lease, runtimeId: "scripted-404" },
        reason: "failed",
      }),
    ).resolves.toBeUndefined();
  });

  it("treats an unknown runtime as already reaped and surfaces other destroy failures", async () => {
    const provider = createScriptedProvider();
    const runtime = createProviderManagedRuntime(baseOptions(provider));
    const lease = await runtime.sandbox.acquire(acquireInput());
    provider.runtimes.get(lease.runtimeId)!.destroyError = new Error("provider unavailable");
    expect(await codeOf(runtime.sandbox.terminate({ scope, fence, lease, reason: "failed" }))).toBe(
      "sandbox_failed",
    );
  });

  it("refuses foreign and malformed leases", async () => {
    const runtime = createProviderManagedRuntime(baseOptions(createScriptedProvider()));
    const foreign = { provider: "other", runtimeId: "x" };
    expect(await codeOf(runtime.sandbox.reap({ scope, lease: foreign, reason: "failed" }))).toBe(
      "provider_mismatch",
    );
    expect(await codeOf(runtime.sandbox.heartbeat({ scope, fence, lease: foreign }))).toBe(
      "provider_mismatch",
    );
    expect(
      await codeOf(runtime.sandbox.terminate({ scope, fence, lease: foreign, reason: "failed" })),
    ).toBe("provider_mismatch");
    expect(await codeOf(runtime.sandbox.inspect({ provider: "scripted", runtimeId: "" }))).toBe(
      "invalid_request",
    );
  });

  it("refuses suspend unless suspendResume is supported, and aborted acquires start nothing", async () => {
    const provider = createScriptedProvider();
    const runtime = createProviderManagedRuntime(baseOptions(provider));
    const lease = await runtime.sandbox.acquire(acquireInput());
    expect(await codeOf(runtime.sandbox.suspend({ scope, fence, lease, signal: signal() }))).toBe(
      "unsupported_operation",
    );
    const controller = new AbortController();
    controller.abort();
    expect(
      await codeOf(runtime.sandbox.acquire({ ...acquireInput(), signal: controller.signal })),
    ).toBe("aborted");
    expect(provider.calls.create).toBe(1);
  });
});

describe("write-ahead journal binding", () => {
  const journaling = (onRecord: (runtimeId: string) => void | Promise<void>) => ({
    record: async (lease: { provider: string; runtimeId: string }) => {
      expect(lease.provider).toBe("scripted");
      await onRecord(lease.runtimeId);
    },
  });

  it("records the minted id before the provider starts the runtime", async () => {
    const provider = createScriptedProvider();
    const runtime = createProviderManagedRuntime(baseOptions(provider));
    const startedAtRecord: boolean[] = [];
    const lease = await runtime.sandbox.acquire({
      ...acquireInput(),
      journal: journaling((id) => void startedAtRecord.push(provider.runtimes.has(id))),
    });
    expect(lease.runtimeId).toBe("scripted-1");
    // The provider's hook ran first (nothing started); the composition's own record after create is deduplicated by the host.
    expect(startedAtRecord).toEqual([false, true]);
  });

  it("starts nothing when the journal write fails, and fails with its error", async () => {
    const provider = createScriptedProvider();
    const runtime = createProviderManagedRuntime(baseOptions(provider));
    const refusal = new SandboxFailedError({ message: "journal store unavailable" });
    const error = await runtime.sandbox
      .acquire({ ...acquireInput(), journal: journaling(() => Promise.reject(refusal)) })
      .catch((caught: unknown) => caught);
    expect(error).toBe(refusal);
    expect(provider.runtimes.size).toBe(0);
  });

  it("journals a provider that cannot record before start right after create, before readiness", async () => {
    const provider = createScriptedProvider({ journalsBeforeStart: false });
    const runtime = createProviderManagedRuntime(baseOptions(provider));
    const execsAtRecord: number[] = [];
    await runtime.sandbox.acquire({
      ...acquireInput(),
      journal: journaling(
        (id) => void execsAtRecord.push(provider.runtimes.get(id)?.execLog.length ?? -1),
      ),
    });
    expect(execsAtRecord).toEqual([0]);
  });

  it("destroys a runtime whose late journal write fails", async () => {
    const provider = createScriptedProvider({ journalsBeforeStart: false });
    const runtime = createProviderManagedRuntime(baseOptions(provider));
    await expect(
      runtime.sandbox.acquire({
        ...acquireInput(),
        journal: journaling(() => Promise.reject(new Error("store down"))),
      }),
    ).rejects.toThrow(/store down/);
    expect(provider.runtimes.get("scripted-1")?.destroyCalls).toBe(1);
  });
});

describe("the harness version in the lease", () => {
  /**
   * An executable that answers `--version` with `line`, beside the AMA worker bin's folder under /opt, which
   * the confined local runtime sees (it does not see the host's temporary folder).
   */
  const fakeHarness = async (line: string) => {
    const { mkdtemp, writeFile, chmod, mkdir } = await import("node:fs/promises");
    const { dirname, join } = await import("node:path");
    const binDirectory = process.env.OMA_AMA_WORKER_BIN_DIR;
    const parent = binDirectory ? dirname(binDirectory) : "/opt/open-managed-agents";
    await mkdir(parent, { recursive: true });
    const directory = await mkdtemp(join(parent, "fake-harness-"));
    onTestFinished(() => rm(directory, { recursive: true, force: true }));
    const path = join(directory, "fake-harness");
    await writeFile(
      path,
      `#!/bin/sh\n[ "$1" = --version ] && printf '%s\\n' '${line}' 'second line'\nexit 0\n`,
    );
    await chmod(path, 0o755);
    return { path };
  };

  it("records the first line of an AMA worker profile's --version, so an operator sees which worker ran", async () => {
    const harness = await fakeHarness(
      "oma-ama-worker 9.9.9 (ama-worker-v1) @anthropic-ai/sdk 1.17.0",
    );
    const { runtime } = localWorld({ readiness: undefined, profile: amaProfile(harness.path) });
    const lease = await runtime.sandbox.acquire(acquireInput());
    expect(lease.metadata).toEqual({
      [HARNESS_VERSION_METADATA_KEY]:
        "oma-ama-worker 9.9.9 (ama-worker-v1) @anthropic-ai/sdk 1.17.0",
    });
    expect(HARNESS_VERSION_METADATA_KEY).toBe("oma.harness.version");
    await runtime.sandbox.terminate({ scope, fence, lease, reason: "completed" });
  });

  it("asks nothing of a harness other than the profile's AMA worker command", async () => {
    const harness = await fakeHarness("never asked");
    const configured = localWorld({
      readiness: { command: harness.path },
      profile: amaProfile("sh"),
    });
    const lease = await configured.runtime.sandbox.acquire(acquireInput());
    expect(lease.metadata).toBeUndefined();
    const plain = localWorld({ readiness: { command: harness.path } });
    expect((await plain.runtime.sandbox.acquire(acquireInput())).metadata).toBeUndefined();
  });

  it("leaves the version out when the AMA worker command prints none", async () => {
    const { runtime } = localWorld({ readiness: undefined, profile: amaProfile("true") });
    expect((await runtime.sandbox.acquire(acquireInput())).metadata).toBeUndefined();
  });
});
