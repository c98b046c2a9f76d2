import { createHash } from "node:crypto";
import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { createProviderManagedRuntime, readOutputManifest } from "../src/index.js";
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
const fence = fenceFor(scope, 3);
const hex = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex");

async function failure(promise: Promise<unknown>): Promise<ManagedRuntimeError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!ManagedRuntimeError.isInstance(error))
    throw new Error(`expected a typed error, got ${String(error)}`);
  return error;
}

/** Acquires a local runtime with outputs attached; returns helpers around it. */
async function started(overrides: Parameters<typeof localWorld>[0] = {}) {
  const world = localWorld(overrides);
  const { runtime } = world;
  const binding = await runtime.outputs.prepare({
    scope,
    fence,
    strategy: "final_collect",
    idempotencyKey: "p",
    signal: signal(),
  });
  const workspace = await runtime.workspace.materialize({
    scope,
    fence,
    strategy: "checkpoint_restore",
    activeCheckpoint: null,
    idempotencyKey: "m",
    signal: signal(),
  });
  const lease = await runtime.sandbox.acquire({
    scope,
    fence,
    plan: checkpointPlan,
    workspace,
    outputs: binding,
    credentialEgress: null,
    signal: signal(),
  });
  await runtime.outputs.attach({
    scope,
    fence,
    strategy: "final_collect",
    binding,
    sandbox: lease,
    signal: signal(),
  });
  const live = await runtime.runtime({ scope, lease });
  const hostOutputs = join(world.provider.rootDir, "runtimes", lease.runtimeId, "outputs");
  const collect = () =>
    runtime.outputs.collect({
      scope,
      fence,
      strategy: "final_collect",
      binding,
      sandbox: lease,
      signal: signal(),
    });
  const finalize = (entries: Awaited<ReturnType<typeof collect>>, idempotencyKey = "f") =>
    runtime.outputs.finalize({
      scope,
      fence,
      binding,
      sandbox: lease,
      entries,
      idempotencyKey,
      signal: signal(),
    });
  return { ...world, binding, lease, live, hostOutputs, collect, finalize };
}

describe("outputs port: final_collect over the local-subprocess provider", () => {
  it("collects, stores content-addressed blobs and a manifest that reads back verified", async () => {
    const world = await started();
    await world.live.writeFile("/mnt/session/outputs/report.md", "# done\n");
    await world.live.writeFile("/mnt/session/outputs/data/b.csv", "a,b\n1,2\n");
    symlinkSync("/etc/hostname", join(world.hostOutputs, "link-outside"));

    const entries = await world.collect();
    expect(entries).toEqual([
      { logicalPath: "data/b.csv", contentHash: `sha256:${hex("a,b\n1,2\n")}`, size: 8 },
      { logicalPath: "report.md", contentHash: `sha256:${hex("# done\n")}`, size: 7 },
    ]);
    const candidate = await world.finalize(entries);
    expect(candidate).toMatchObject({
      id: `out_${candidate.contentHash.slice(7, 39)}`,
      entries: 2,
    });
    expect(await (await world.store.get(`outputs/blobs/${hex("# done\n")}`))?.text()).toBe(
      "# done\n",
    );

    const manifest = await readOutputManifest(
      world.store,
      JSON.parse(
        JSON.stringify({
          id: candidate.id,
          contentHash: candidate.contentHash,
          metadata: candidate.metadata,
        }),
      ),
    );
    expect(manifest).toEqual({
      version: 1,
      sessionId: "session-1",
      workId: "work-1",
      generation: 3,
      entries,
    });
    expect(await world.finalize(entries)).toBe(candidate);

    // Another composition storing the same content finds and re-verifies the existing objects.
    const again = createProviderManagedRuntime(world.options);
    const repeat = await again.outputs.finalize({
      scope,
      fence,
      binding: world.binding,
      sandbox: world.lease,
      entries,
      idempotencyKey: "g",
      signal: signal(),
    });
    expect(repeat).toEqual(candidate);
  });

  it("rejects a file name that is not valid UTF-8 with invalid_request", async () => {
    const world = await started();
    writeFileSync(
      Buffer.concat([
        Buffer.from(`${world.hostOutputs}/bad-`),
        Buffer.from([0xff, 0xfe]),
        Buffer.from(".txt"),
      ]),
      "x",
    );
    const error = await failure(world.collect());
    expect(error.code).toBe("invalid_request");
    expect(error.message).toContain("not valid UTF-8");
  });

  it("enforces maxFiles and maxBytes with limit_exceeded naming the limit", async () => {
    const world = await started();
    const small = createProviderManagedRuntime({
      ...world.options,
      outputs: { store: world.store, keyPrefix: "outputs", maxFiles: 2, maxBytes: 10 },
    });
    const collect = () =>
      small.outputs.collect({
        scope,
        fence,
        strategy: "final_collect",
        binding: world.binding,
        sandbox: world.lease,
        signal: signal(),
      });
    await world.live.writeFile("/mnt/session/outputs/a", "123456");
    await world.live.writeFile("/mnt/session/outputs/b", "12345");
    expect((await failure(collect())).context).toMatchObject({ limit: "maxBytes", maxBytes: 10 });
    await world.live.writeFile("/mnt/session/outputs/b", "1");
    await world.live.writeFile("/mnt/session/outputs/c", "1");
    expect((await failure(collect())).context).toMatchObject({ limit: "maxFiles", maxFiles: 2 });
  });

  it("refuses to store a file that changed after collect, and stores nothing for it", async () => {
    const world = await started();
    await world.live.writeFile("/mnt/session/outputs/a.txt", "first");
    const entries = await world.collect();
    await world.live.writeFile("/mnt/session/outputs/a.txt", "second");
    const error = await failure(world.finalize(entries));
    expect(error.code).toBe("integrity_failed");
    expect(error.message).toContain("changed after it was collected");
    expect(await world.store.head(`outputs/blobs/${hex("first")}`)).toBeNull();
    expect(await world.store.head(`outputs/blobs/${hex("second")}`)).toBeNull();
  });

  it("treats a different object at a content-addressed key as a storage collision", async () => {
    const world = await started();
    await world.live.writeFile("/mnt/session/outputs/a.txt", "real");
    await world.store.put(`outputs/blobs/${hex("real")}`, "forged");
    const error = await failure(world.finalize(await world.collect()));
    expect(error.code).toBe("integrity_failed");
    expect(error.message).toContain("storage collision");
  });

  it("refuses unsafe entries handed to finalize", async () => {
    const world = await started();
    const entry = { logicalPath: "../etc/passwd", contentHash: `sha256:${hex("x")}`, size: 1 };
    expect((await failure(world.finalize([entry]))).code).toBe("invalid_request");
    expect(
      (await failure(world.finalize([{ ...entry, logicalPath: "a", contentHash: "md5:00" }]))).code,
    ).toBe("invalid_request");
    expect(
      (
        await failure(
          world.finalize([
            { ...entry, logicalPath: "a" },
            { ...entry, logicalPath: "a" },
          ]),
        )
      ).code,
    ).toBe("invalid_request");
  });

  it("detects a tampered manifest or candidate when reading it back", async () => {
    const world = await started();
    await world.live.writeFile("/mnt/session/outputs/a.txt", "a");
    const candidate = await world.finalize(await world.collect());
    const key = candidate.metadata?.["oma.outputs.manifest_key"] as string;
    expect(
      (await failure(readOutputManifest(world.store, { ...candidate, id: "out_other" }))).code,
    ).toBe("integrity_failed");
    expect(
      (
        await failure(
          readOutputManifest(world.store, {
            ...candidate,
            metadata: { "oma.outputs.manifest_key": "outputs/manifests/x.json" },
          }),
        )
      ).code,
    ).toBe("integrity_failed");
    await world.store.delete(key);
    expect((await failure(readOutputManifest(world.store, candidate))).code).toBe("not_found");
    await world.store.put(key, '{"version":1}');
    expect((await failure(readOutputManifest(world.store, candidate))).code).toBe(
      "integrity_failed",
    );
  });

  it("resolves a per-scope key prefix and refuses a bad one", async () => {
    const world = localWorld();
    const perScope = createProviderManagedRuntime({
      ...world.options,
      outputs: { store: world.store, keyPrefix: (s) => `tenants/${s.workspaceId}/outputs` },
    });
    const binding = await perScope.outputs.prepare({
      scope,
      fence,
      strategy: "final_collect",
      idempotencyKey: "p",
      signal: signal(),
    });
    expect(binding.metadata).toEqual({ "oma.outputs.prefix": "tenants/tenant-1/outputs" });
    const bad = createProviderManagedRuntime({
      ...world.options,
      outputs: { store: world.store, keyPrefix: () => "/abs" },
    });
    expect(
      (
        await failure(
          bad.outputs.prepare({
            scope,
            fence,
            strategy: "final_collect",
            idempotencyKey: "p",
            signal: signal(),
          }),
        )
      ).code,
    ).toBe("invalid_config");
  });
});

describe("outputs port: failing closed", () => {
  it("advertises nothing and refuses every operation without configured outputs", async () => {
    const runtime = createProviderManagedRuntime(baseOptions(createScriptedProvider()));
    const binding = { bindingId: "b", mountPath: "/mnt/session/outputs" as const };
    const sandbox = { provider: "scripted", runtimeId: "scripted-1" };
    expect(await runtime.outputs.capabilities(scope)).toEqual({ strategies: [] });
    const calls = [
      runtime.outputs.prepare({
        scope,
        fence,
        strategy: "final_collect",
        idempotencyKey: "p",
        signal: signal(),
      }),
      runtime.outputs.attach({
        scope,
        fence,
        strategy: "final_collect",
        binding,
        sandbox,
        signal: signal(),
      }),
      runtime.outputs.collect({
        scope,
        fence,
        strategy: "final_collect",
        binding,
        sandbox,
        signal: signal(),
      }),
      runtime.outputs.finalize({
        scope,
        fence,
        binding,
        sandbox,
        entries: [],
        idempotencyKey: "f",
        signal: signal(),
      }),
    ];
    for (const call of calls) expect((await failure(call)).code).toBe("capability_unsupported");
  });

  it("collects through readFileBytes when the sandbox has no stream reader", async () => {
    const { store } = localWorld();
    const provider = createScriptedProvider();
    const runtime = createProviderManagedRuntime(
      baseOptions(provider, { outputs: { store, keyPrefix: "out" } }),
    );
    const workspace = await runtime.workspace.materialize({
      scope,
      fence,
      strategy: "checkpoint_restore",
      activeCheckpoint: null,
      idempotencyKey: "m",
      signal: signal(),
    });
    const lease = await runtime.sandbox.acquire({
      scope,
      fence,
      plan: checkpointPlan,
      workspace,
      outputs: null,
      credentialEgress: null,
      signal: signal(),
    });
    provider.runtimes
      .get(lease.runtimeId)!
      .files.set("/mnt/session/outputs/r.txt", new TextEncoder().encode("remote"));
    const binding = await runtime.outputs.prepare({
      scope,
      fence,
      strategy: "final_collect",
      idempotencyKey: "p",
      signal: signal(),
    });
    const entries = await runtime.outputs.collect({
      scope,
      fence,
      strategy: "final_collect",
      binding,
      sandbox: lease,
      signal: signal(),
    });
    expect(entries).toEqual([
      { logicalPath: "r.txt", contentHash: `sha256:${hex("remote")}`, size: 6 },
    ]);
    const candidate = await runtime.outputs.finalize({
      scope,
      fence,
      binding,
      sandbox: lease,
      entries,
      idempotencyKey: "f",
      signal: signal(),
    });
    expect((await readOutputManifest(store, candidate)).entries).toEqual(entries);
    expect(await (await store.get(`out/blobs/${hex("remote")}`))?.text()).toBe("remote");
  });

  it("refuses strategies other than final_collect, and non-UTF-8 names from a remote listing", async () => {
    const { store } = localWorld();
    const provider = createScriptedProvider();
    const runtime = createProviderManagedRuntime(
      baseOptions(provider, { outputs: { store, keyPrefix: "out" } }),
    );
    expect(
      (
        await failure(
          runtime.outputs.prepare({
            scope,
            fence,
            strategy: "durable_mount",
            idempotencyKey: "p",
            signal: signal(),
          }),
        )
      ).code,
    ).toBe("capability_unsupported");
    const workspace = await runtime.workspace.materialize({
      scope,
      fence,
      strategy: "checkpoint_restore",
      activeCheckpoint: null,
      idempotencyKey: "m",
      signal: signal(),
    });
    const lease = await runtime.sandbox.acquire({
      scope,
      fence,
      plan: checkpointPlan,
      workspace,
      outputs: null,
      credentialEgress: null,
      signal: signal(),
    });
    provider.runtimes.get(lease.runtimeId)!.outputNames = [new Uint8Array([0x61, 0xc3, 0x28])];
    const binding = { bindingId: "b", mountPath: "/mnt/session/outputs" as const };
    const error = await failure(
      runtime.outputs.collect({
        scope,
        fence,
        strategy: "final_collect",
        binding,
        sandbox: lease,
        signal: signal(),
      }),
    );
    expect(error.message).toContain("not valid UTF-8");
  });
});
