import * as z from "zod";
import { describe, expect, it } from "vitest";
import {
  ManagedRuntimeError,
  UpstreamProtocolError,
  parseHarnessSupervisorCommand,
  parseHarnessSupervisorEvent,
  parseManagedRuntimePlan,
  parseManagedRuntimeProfile,
  parseManagedRuntimeProviderDriverDescriptor,
  parseManagedSandboxLease,
  parseRecord,
  parseRuntimeCheckpointRef,
  parseRuntimeEnvironment,
  parseRuntimeOrphanRecord,
  parseSandboxJournalRecord,
  parseRuntimePublicationCandidate,
  parseRuntimeResourcePublication,
  parseRuntimeResourceScope,
  parseSandboxCheckpointHandle,
  parseSessionOutputEntryCandidate,
  parseSessionOutputManifestCandidate,
  parseWorkspaceCheckpointCandidate,
  runtimeOrphanId,
  sandboxJournalId,
  runtimeResourceFenceSchema,
  scalarMetadataSchema,
} from "../src/index.js";
import {
  checkpointHandle,
  checkpointRef,
  descriptor,
  lease,
  orphan,
  profile,
  scope,
} from "./fixtures.js";

const journalRecord = {
  id: sandboxJournalId(scope, 2, lease),
  scope,
  generation: 2,
  ownerId: "owner-a",
  startRevision: 3,
  sandbox: lease,
  attempts: 0,
  lastError: "",
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
};

/** Runs `parse` and returns the typed error it throws. */
function rejection(parse: () => unknown): ManagedRuntimeError {
  try {
    parse();
  } catch (error) {
    if (ManagedRuntimeError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected the input to be rejected");
}

/** Asserts a rejection with `invalid_request` whose message and context name `path`. */
function expectRejectedAt(parse: () => unknown, path: string): ManagedRuntimeError {
  const error = rejection(parse);
  expect(error.code).toBe("invalid_request");
  expect(error.context.path).toBe(path);
  expect(error.message).toContain(` at ${path}: `);
  return error;
}

describe("accepts valid records unchanged", () => {
  it.each([
    ["lease", () => parseManagedSandboxLease(lease), lease],
    ["scope", () => parseRuntimeResourceScope(scope), scope],
    ["orphan", () => parseRuntimeOrphanRecord(orphan), orphan],
    ["journal record", () => parseSandboxJournalRecord(journalRecord), journalRecord],
    ["checkpoint ref", () => parseRuntimeCheckpointRef(checkpointRef), checkpointRef],
    ["checkpoint handle", () => parseSandboxCheckpointHandle(checkpointHandle), checkpointHandle],
    ["profile", () => parseManagedRuntimeProfile(profile), profile],
    ["descriptor", () => parseManagedRuntimeProviderDriverDescriptor(descriptor), descriptor],
  ] as const)("%s", (_name, parse, expected) => {
    expect(parse()).toEqual(expected);
  });

  it("publication with null outputs, optional runtime checkpoint and candidates", () => {
    const candidate = { id: "ckpt-1", contentHash: "sha256:00", metadata: { bytes: 10 } };
    expect(parseRuntimePublicationCandidate(candidate)).toEqual(candidate);
    const publication = {
      generation: 3,
      revision: 7,
      workspaceCandidate: candidate,
      outputCandidate: null,
    };
    expect(parseRuntimeResourcePublication(publication)).toEqual(publication);
    expect(
      parseRuntimeResourcePublication({ ...publication, runtimeCheckpoint: checkpointRef })
        .runtimeCheckpoint,
    ).toEqual(checkpointRef);
    expect(
      parseRuntimeResourcePublication({ ...publication, runtimeCheckpoint: null })
        .runtimeCheckpoint,
    ).toBeNull();
    expect(parseWorkspaceCheckpointCandidate({ ...candidate, revision: 2 })).toEqual({
      ...candidate,
      revision: 2,
    });
  });

  it("outputs, plan, supervisor lines and environments", () => {
    expect(
      parseSessionOutputEntryCandidate({
        logicalPath: "report/a.md",
        contentHash: "sha256:1",
        size: 0,
      }),
    ).toMatchObject({ size: 0 });
    expect(
      parseSessionOutputManifestCandidate({ id: "m", contentHash: "sha256:2", entries: 3 }),
    ).toMatchObject({ entries: 3 });
    const plan = {
      workspaceStrategy: "checkpoint_restore",
      outputStrategy: null,
      runtimeCheckpoint: null,
      driver: "ama_worker",
    };
    expect(parseManagedRuntimePlan(plan)).toEqual(plan);
    const start = {
      type: "start",
      scope,
      harness: { id: "h", version: "1" },
      workspacePath: "/workspace",
      outputPath: null,
    };
    expect(parseHarnessSupervisorCommand(start)).toEqual(start);
    expect(parseHarnessSupervisorCommand({ type: "stop", reason: "aborted" })).toEqual({
      type: "stop",
      reason: "aborted",
    });
    expect(
      parseHarnessSupervisorEvent({
        type: "checkpoint",
        checkpointId: "c",
        sessionId: "s",
        turnId: "t",
      }),
    ).toMatchObject({ turnId: "t" });
    expect(
      parseHarnessSupervisorEvent({ type: "ready", protocol: "openma-harness-supervisor-v1" }),
    ).toMatchObject({ type: "ready" });
    expect(
      parseRuntimeEnvironment({
        kind: "custom",
        artifact: { type: "image", reference: "registry/img:1" },
      }),
    ).toMatchObject({ kind: "custom" });
  });
});

describe("rejects malformed records naming the failing path", () => {
  it("lease with nested metadata", () => {
    expectRejectedAt(
      () => parseManagedSandboxLease({ ...lease, metadata: { nested: { a: 1 } } }),
      "metadata.nested",
    );
  });

  it("lease metadata with arrays, non-finite numbers or an empty provider", () => {
    expectRejectedAt(
      () => parseManagedSandboxLease({ ...lease, metadata: { list: [1, 2] } }),
      "metadata.list",
    );
    expectRejectedAt(
      () => parseManagedSandboxLease({ ...lease, metadata: { ratio: Number.POSITIVE_INFINITY } }),
      "metadata.ratio",
    );
    expectRejectedAt(() => parseManagedSandboxLease({ ...lease, provider: "" }), "provider");
  });

  it("never echoes the rejected value, which may be a secret", () => {
    const error = expectRejectedAt(
      () => parseManagedSandboxLease({ ...lease, metadata: { token: { value: "sk-live-123" } } }),
      "metadata.token",
    );
    expect(JSON.stringify(error.toJSON())).not.toContain("sk-live-123");
    expect(error.message).not.toContain("sk-live-123");
  });

  it("orphan with a nested lease error points into the lease", () => {
    expectRejectedAt(
      () => parseRuntimeOrphanRecord({ ...orphan, sandbox: { ...lease, runtimeId: 7 } }),
      "sandbox.runtimeId",
    );
    expectRejectedAt(() => parseRuntimeOrphanRecord({ ...orphan, reason: "crashed" }), "reason");
    expectRejectedAt(
      () => parseRuntimeOrphanRecord({ ...orphan, scope: { ...scope, workId: "" } }),
      "scope.workId",
    );
  });

  it("orphan with a token field parses, and the token does not survive parsing", () => {
    const parsed = parseRuntimeOrphanRecord({
      ...orphan,
      token: "fence-token-secret",
      sandbox: { ...lease, apiKey: "k" },
    });
    expect(parsed).toEqual(orphan);
    expect(JSON.stringify(parsed)).not.toContain("fence-token-secret");
  });

  it("scope, publication and checkpoint records", () => {
    expectRejectedAt(() => parseRuntimeResourceScope({ ...scope, workId: undefined }), "workId");
    expectRejectedAt(
      () =>
        parseRuntimeResourcePublication({
          generation: -1,
          revision: 0,
          workspaceCandidate: { id: "a", contentHash: "b" },
          outputCandidate: null,
        }),
      "generation",
    );
    expectRejectedAt(() => parseRuntimeCheckpointRef({ ...checkpointRef, kind: "memory" }), "kind");
    expectRejectedAt(
      () => parseSandboxCheckpointHandle({ ...checkpointHandle, scope: "global" }),
      "scope",
    );
    expectRejectedAt(
      () => parseSandboxCheckpointHandle({ ...checkpointHandle, metadata: { deep: {} } }),
      "metadata.deep",
    );
    expectRejectedAt(
      () => parseSessionOutputEntryCandidate({ logicalPath: "a", contentHash: "b", size: 1.5 }),
      "size",
    );
  });

  it("profile, descriptor and plan", () => {
    expectRejectedAt(
      () => parseManagedRuntimeProfile({ ...profile, driver: { type: "unknown_lane" } }),
      "driver.type",
    );
    expectRejectedAt(
      () =>
        parseManagedRuntimeProfile({
          ...profile,
          driver: { type: "ama_worker", process: { command: "harness", cwd: "relative" } },
        }),
      "driver.process.cwd",
    );
    expectRejectedAt(
      () =>
        parseManagedRuntimeProfile({
          ...profile,
          driver: { ...profile.driver, readyTimeoutMs: 0 },
        }),
      "driver.readyTimeoutMs",
    );
    expectRejectedAt(
      () => parseManagedRuntimeProviderDriverDescriptor({ ...descriptor, placements: [] }),
      "placements",
    );
    expectRejectedAt(
      () =>
        parseManagedRuntimeProviderDriverDescriptor({ ...descriptor, specificationVersion: "v2" }),
      "specificationVersion",
    );
    const { specificationVersion: _omitted, ...unversioned } = descriptor;
    expectRejectedAt(
      () => parseManagedRuntimeProviderDriverDescriptor(unversioned),
      "specificationVersion",
    );
    expectRejectedAt(
      () =>
        parseManagedRuntimeProviderDriverDescriptor({
          ...descriptor,
          capabilities: { ...descriptor.capabilities, harness: { drivers: ["shell"] } },
        }),
      "capabilities.harness.drivers.0",
    );
    expectRejectedAt(
      () =>
        parseManagedRuntimePlan({
          workspaceStrategy: "durable_mount",
          outputStrategy: null,
          runtimeCheckpoint: "vm",
          driver: "ama_worker",
        }),
      "runtimeCheckpoint",
    );
  });

  it("supervisor lines and environments", () => {
    expectRejectedAt(
      () => parseHarnessSupervisorEvent({ type: "heartbeat", sequence: -1 }),
      "sequence",
    );
    expectRejectedAt(
      () => parseHarnessSupervisorEvent({ type: "ready", protocol: "v2" }),
      "protocol",
    );
    expectRejectedAt(() => parseHarnessSupervisorEvent({ type: "telemetry" }), "type");
    expectRejectedAt(
      () => parseHarnessSupervisorCommand({ type: "checkpoint.commit", checkpointId: "" }),
      "checkpointId",
    );
    expectRejectedAt(
      () => parseRuntimeEnvironment({ kind: "base", artifact: { type: "bootstrap", script: "" } }),
      "artifact.script",
    );
  });

  it("a non-object input fails at the root", () => {
    expectRejectedAt(() => parseManagedSandboxLease("cloudflare:sess-1"), "(root)");
    expectRejectedAt(() => parseManagedSandboxLease(null), "(root)");
  });

  it("wire payloads can be reported as upstream_protocol", () => {
    const error = rejection(() =>
      parseHarnessSupervisorEvent({ type: "heartbeat" }, { code: "upstream_protocol" }),
    );
    expect(error).toBeInstanceOf(UpstreamProtocolError);
    expect(error.context).toMatchObject({ record: "supervisor event", path: "sequence" });
  });

  it("parseRecord counts every issue and keeps the zod error as cause", () => {
    const error = rejection(() =>
      parseRecord(
        scalarMetadataSchema,
        { a: {}, b: [] },
        { record: "metadata", code: "invalid_config" },
      ),
    );
    expect(error.code).toBe("invalid_config");
    expect(error.context).toMatchObject({ record: "metadata", issues: 2 });
    expect(error.cause).toBeInstanceOf(Error);
    expect(error.toJSON()).not.toHaveProperty("cause");
  });

  it("parseRecord names a misspelt key of a strict object before the required key it leaves missing", () => {
    const schema = z.strictObject({ rootDir: z.string(), leaseTtlMs: z.number().optional() });
    const error = rejection(() =>
      parseRecord(schema, { rootdir: "/srv" }, { record: "acme options", code: "invalid_config" }),
    );
    expect(error.message).toBe('invalid acme options at (root): unknown key "rootdir"');
    const nested = rejection(() =>
      parseRecord(
        z.object({ limits: z.strictObject({ max: z.number() }) }),
        { limits: { max: 1, mx: 2, mix: 3 } },
        { record: "acme options" },
      ),
    );
    expect(nested.message).toBe('invalid acme options at limits: unknown keys "mx", "mix"');
  });
});

describe("fence schema", () => {
  const fence = {
    ...scope,
    ownerId: "host-a",
    generation: 1,
    token: "t",
    expiresAt: "2026-01-01T00:00:00Z",
  };

  it("accepts a stored fence and requires a positive generation and an ISO expiry", () => {
    expect(runtimeResourceFenceSchema.parse(fence)).toEqual(fence);
    expect(runtimeResourceFenceSchema.safeParse({ ...fence, generation: 0 }).success).toBe(false);
    expect(runtimeResourceFenceSchema.safeParse({ ...fence, expiresAt: "tomorrow" }).success).toBe(
      false,
    );
  });
});

describe("runtimeOrphanId", () => {
  it("is deterministic and changes with generation or runtime", () => {
    const id = runtimeOrphanId(scope, 3, lease);
    expect(runtimeOrphanId({ ...scope }, 3, { ...lease })).toBe(id);
    expect(runtimeOrphanId(scope, 4, lease)).not.toBe(id);
    expect(runtimeOrphanId(scope, 3, { ...lease, runtimeId: "other" })).not.toBe(id);
    expect(JSON.parse(id)).toEqual([
      "ws-1",
      "env-1",
      "sess-1",
      "work-1",
      3,
      "cloudflare",
      "sess-1",
    ]);
  });
});

describe("sandbox journal records", () => {
  it("share the orphan id of the same lease and refuse a lease with nested metadata", () => {
    expect(sandboxJournalId(scope, 2, lease)).toBe(runtimeOrphanId(scope, 2, lease));
    expectRejectedAt(
      () =>
        parseSandboxJournalRecord({
          ...journalRecord,
          sandbox: { ...lease, metadata: { nested: { a: 1 } } },
        }),
      "sandbox.metadata.nested",
    );
    expectRejectedAt(
      () => parseSandboxJournalRecord({ ...journalRecord, generation: -1 }),
      "generation",
    );
    expectRejectedAt(
      () => parseSandboxJournalRecord({ ...journalRecord, startRevision: -1 }),
      "startRevision",
    );
  });
});
