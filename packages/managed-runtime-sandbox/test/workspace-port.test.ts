import { createHash } from "node:crypto";
import {
  ManagedRuntimeError,
  type RuntimePublicationCandidate,
} from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { CHECKPOINT_METADATA_KEY, createProviderManagedRuntime, stableJson } from "../src/index.js";
import { createScriptedProvider } from "./fixtures/scripted-provider.js";
import {
  baseOptions,
  checkpointPlan,
  fenceFor,
  localWorld,
  scopeFor,
  signal,
} from "./fixtures/world.js";

const scope = scopeFor();
const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!ManagedRuntimeError.isInstance(error))
    throw new Error(`expected a typed error, got ${String(error)}`);
  return error.code;
}

/** A candidate as a publication stores it: id, hash and metadata only. */
function published(candidate: RuntimePublicationCandidate): RuntimePublicationCandidate {
  return JSON.parse(
    JSON.stringify({
      id: candidate.id,
      contentHash: candidate.contentHash,
      metadata: candidate.metadata,
    }),
  );
}

function candidateFor(handle: object, id?: string): RuntimePublicationCandidate {
  const json = stableJson(handle);
  const contentHash = sha256(json);
  return {
    id: id ?? `wrc_${contentHash.slice(7, 39)}`,
    contentHash,
    metadata: { [CHECKPOINT_METADATA_KEY]: json },
  };
}

const materialize = (
  runtime: ReturnType<typeof createProviderManagedRuntime>,
  activeCheckpoint: RuntimePublicationCandidate | null,
  strategy = "checkpoint_restore" as const,
) =>
  runtime.workspace.materialize({
    scope,
    fence: fenceFor(scope, 2),
    strategy,
    activeCheckpoint,
    idempotencyKey: "k",
    signal: signal(),
  });

describe("workspace port: checkpoint_restore over the local-subprocess provider", () => {
  it("checkpoints /workspace into a verifiable candidate and restores it into a new runtime", async () => {
    const { runtime } = localWorld();
    const fence = fenceFor(scope, 1);
    const binding = await runtime.workspace.materialize({
      scope,
      fence,
      strategy: "checkpoint_restore",
      activeCheckpoint: null,
      idempotencyKey: "m1",
      signal: signal(),
    });
    const input = {
      scope,
      fence,
      plan: checkpointPlan,
      workspace: binding,
      outputs: null,
      credentialEgress: null,
      signal: signal(),
    };
    const lease = await runtime.sandbox.acquire(input);
    await runtime.workspace.attach({ scope, fence, binding, sandbox: lease, signal: signal() });
    const live = await runtime.runtime({ scope, lease });
    await live.writeFile("/workspace/notes/state.txt", "turn 1");

    const candidate = await runtime.workspace.checkpoint({
      scope,
      fence,
      binding,
      sandbox: lease,
      idempotencyKey: "c1",
      signal: signal(),
    });
    const json = candidate.metadata?.[CHECKPOINT_METADATA_KEY] as string;
    expect(candidate.contentHash).toBe(sha256(json));
    expect(candidate.id).toBe(`wrc_${candidate.contentHash.slice(7, 39)}`);
    expect(candidate.revision).toBe(1);
    expect(JSON.parse(json)).toMatchObject({
      provider: "local-subprocess",
      scope: "portable",
      kind: "filesystem",
    });
    expect(
      await runtime.workspace.checkpoint({
        scope,
        fence,
        binding,
        sandbox: lease,
        idempotencyKey: "c1",
        signal: signal(),
      }),
    ).toBe(candidate);
    await runtime.sandbox.terminate({ scope, fence, lease, reason: "completed" });

    const next = await materialize(runtime, published(candidate));
    const restoredLease = await runtime.sandbox.acquire({
      ...input,
      fence: fenceFor(scope, 2),
      workspace: next,
    });
    expect(restoredLease.runtimeId).not.toBe(lease.runtimeId);
    const restored = await runtime.runtime({ scope, lease: restoredLease });
    expect(await restored.readFile("/workspace/notes/state.txt")).toBe("turn 1");
    await runtime.sandbox.terminate({ scope, fence, lease: restoredLease, reason: "completed" });
  });
});

describe("workspace port: refusing untrusted checkpoints before anything reaches the sandbox", () => {
  const handle = {
    provider: "scripted",
    checkpointId: "portable-1",
    sourceRuntimeId: "scripted-1",
    kind: "filesystem",
    scope: "portable",
  };

  it("rejects tampered metadata, a wrong id, a non-stable form and a missing handle with integrity_failed", async () => {
    const provider = createScriptedProvider();
    const runtime = createProviderManagedRuntime(baseOptions(provider));
    const good = candidateFor(handle);
    const tampered = {
      ...good,
      metadata: {
        [CHECKPOINT_METADATA_KEY]: stableJson({ ...handle, checkpointId: "portable-9" }),
      },
    };
    const { scope: handleScope, ...rest } = handle;
    const unstable = JSON.stringify({ scope: handleScope, ...rest });
    expect(await codeOf(materialize(runtime, tampered))).toBe("integrity_failed");
    expect(await codeOf(materialize(runtime, { ...good, id: "wrc_0000" }))).toBe(
      "integrity_failed",
    );
    expect(
      await codeOf(
        materialize(runtime, {
          id: "x",
          contentHash: sha256(unstable),
          metadata: { [CHECKPOINT_METADATA_KEY]: unstable },
        }),
      ),
    ).toBe("integrity_failed");
    expect(
      await codeOf(
        materialize(runtime, {
          id: "x",
          contentHash: sha256("{}"),
          metadata: { [CHECKPOINT_METADATA_KEY]: "{}" },
        }),
      ),
    ).toBe("integrity_failed");
    expect(await codeOf(materialize(runtime, { id: good.id, contentHash: good.contentHash }))).toBe(
      "integrity_failed",
    );
    expect(provider.calls).toEqual({ create: 0, restore: [], resume: [], connect: [] });
  });

  it("rejects a foreign provider's handle and a handle of the wrong scope with provider_mismatch", async () => {
    const provider = createScriptedProvider();
    const runtime = createProviderManagedRuntime(baseOptions(provider));
    expect(await codeOf(materialize(runtime, candidateFor({ ...handle, provider: "other" })))).toBe(
      "provider_mismatch",
    );
    expect(await codeOf(materialize(runtime, candidateFor({ ...handle, scope: "runtime" })))).toBe(
      "provider_mismatch",
    );
    expect(
      await codeOf(materialize(runtime, null, "retained_runtime" as "checkpoint_restore")),
    ).toBe("capability_unsupported");
    expect(provider.calls.restore).toEqual([]);
  });

  it("re-verifies the binding in acquire, so a tampered binding never reaches the provider", async () => {
    const provider = createScriptedProvider();
    const runtime = createProviderManagedRuntime(baseOptions(provider));
    const binding = await materialize(runtime, candidateFor(handle));
    const forged = {
      ...binding,
      metadata: {
        ...binding.metadata,
        [CHECKPOINT_METADATA_KEY]: stableJson({ ...handle, checkpointId: "evil" }),
      },
    };
    const input = {
      scope,
      fence: fenceFor(scope, 2),
      plan: checkpointPlan,
      outputs: null,
      credentialEgress: null,
      signal: signal(),
    };
    expect(await codeOf(runtime.sandbox.acquire({ ...input, workspace: forged }))).toBe(
      "integrity_failed",
    );
    expect(provider.calls.restore).toEqual([]);
    await runtime.sandbox.acquire({ ...input, workspace: binding });
    expect(provider.calls.restore).toEqual([handle]);
  });
});

describe("workspace port: retained_runtime", () => {
  it("suspends into a runtime-scoped handle and resumes the same runtime on the next acquire", async () => {
    const provider = createScriptedProvider();
    const runtime = createProviderManagedRuntime(
      baseOptions(provider, {
        sandboxCapabilities: {
          suspendResume: "supported",
          hardTerminate: "supported",
          runtimeCheckpoints: [],
        },
        workspace: { strategies: ["checkpoint_restore", "retained_runtime"] },
      }),
    );
    const plan = { ...checkpointPlan, workspaceStrategy: "retained_runtime" as const };
    const fence = fenceFor(scope, 1);
    const binding = await runtime.workspace.materialize({
      scope,
      fence,
      strategy: "retained_runtime",
      activeCheckpoint: null,
      idempotencyKey: "m",
      signal: signal(),
    });
    const lease = await runtime.sandbox.acquire({
      scope,
      fence,
      plan,
      workspace: binding,
      outputs: null,
      credentialEgress: null,
      signal: signal(),
    });
    expect(
      await codeOf(
        runtime.workspace.checkpoint({
          scope,
          fence,
          binding,
          sandbox: lease,
          idempotencyKey: "early",
          signal: signal(),
        }),
      ),
    ).toBe("invalid_request");

    const suspended = await runtime.sandbox.suspend({ scope, fence, lease, signal: signal() });
    expect(suspended.runtimeId).toBe(lease.runtimeId);
    expect(JSON.parse(JSON.stringify(suspended))).toEqual(suspended);
    const candidate = await runtime.workspace.checkpoint({
      scope,
      fence,
      binding,
      sandbox: suspended,
      idempotencyKey: "c",
      signal: signal(),
    });
    expect(JSON.parse(candidate.metadata?.[CHECKPOINT_METADATA_KEY] as string)).toMatchObject({
      scope: "runtime",
      sourceRuntimeId: lease.runtimeId,
    });

    const next = await runtime.workspace.materialize({
      scope,
      fence: fenceFor(scope, 2),
      strategy: "retained_runtime",
      activeCheckpoint: published(candidate),
      idempotencyKey: "m2",
      signal: signal(),
    });
    expect(await codeOf(materialize(runtime, published(candidate)))).toBe("provider_mismatch");
    const resumed = await runtime.sandbox.acquire({
      scope,
      fence: fenceFor(scope, 2),
      plan,
      workspace: next,
      outputs: null,
      credentialEgress: null,
      signal: signal(),
    });
    expect(resumed.runtimeId).toBe(lease.runtimeId);
    expect(provider.calls.resume).toHaveLength(1);
    expect(provider.calls.restore).toHaveLength(0);
  });
});
