import type * as z from "zod";
import { describe, expectTypeOf, it } from "vitest";
import {
  type ErrorCode,
  type ErrorContext,
  type FenceAcquireResult,
  type FencePublishResult,
  type ManagedRuntimeErrorJSON,
  type ManagedRuntimeProviderDriverPort,
  type ManagedRuntimeProviderResources,
  type ManagedSandboxLease,
  type ManagedSandboxPort,
  type RuntimeOrphanPort,
  type RuntimeOrphanRecord,
  type SandboxJournalBinding,
  type SandboxJournalRecord,
  type RuntimeResourceFence,
  type RuntimeResourceFencePort,
  type SandboxCheckpointHandle,
  type SandboxHeartbeatResult,
  type ScalarMetadata,
  type WorkspacePersistencePort,
  type WorkspaceCheckpointCandidate,
  InvalidConfigError,
  ManagedRuntimeError,
  type managedSandboxLeaseSchema,
  parseManagedSandboxLease,
  parseRuntimeOrphanRecord,
  parseSandboxJournalRecord,
  type sandboxCheckpointHandleSchema,
} from "../src/index.js";

describe("records", () => {
  it("a lease holds only provider, runtime id and scalar metadata", () => {
    expectTypeOf<ManagedSandboxLease>().toEqualTypeOf<{
      readonly provider: string;
      readonly runtimeId: string;
      readonly metadata?: ScalarMetadata;
    }>();
    expectTypeOf<ScalarMetadata>().toEqualTypeOf<
      Readonly<Record<string, string | number | boolean | null>>
    >();
  });

  it("orphan records and checkpoint handles carry no token", () => {
    expectTypeOf<RuntimeOrphanRecord>().not.toHaveProperty("token");
    expectTypeOf<SandboxJournalRecord>().not.toHaveProperty("token");
    expectTypeOf<SandboxJournalRecord["sandbox"]>().toEqualTypeOf<ManagedSandboxLease>();
    expectTypeOf<SandboxJournalBinding["record"]>()
      .parameter(0)
      .toEqualTypeOf<ManagedSandboxLease>();
    expectTypeOf(parseSandboxJournalRecord).returns.toExtend<SandboxJournalRecord>();
    expectTypeOf<RuntimeOrphanRecord["sandbox"]>().toEqualTypeOf<ManagedSandboxLease>();
    expectTypeOf<SandboxCheckpointHandle>().not.toHaveProperty("token");
    expectTypeOf<SandboxCheckpointHandle["scope"]>().toEqualTypeOf<"runtime" | "portable">();
    expectTypeOf<RuntimeResourceFence["token"]>().toEqualTypeOf<string>();
  });

  it("schemas and parsers produce exactly the interfaces", () => {
    expectTypeOf<z.output<typeof managedSandboxLeaseSchema>>().toEqualTypeOf<{
      provider: string;
      runtimeId: string;
      metadata?: Record<string, string | number | boolean | null> | undefined;
    }>();
    expectTypeOf<
      z.output<typeof sandboxCheckpointHandleSchema>
    >().toExtend<SandboxCheckpointHandle>();
    expectTypeOf(parseManagedSandboxLease).returns.toExtend<ManagedSandboxLease>();
    expectTypeOf(parseRuntimeOrphanRecord).returns.toExtend<RuntimeOrphanRecord>();
    expectTypeOf(parseManagedSandboxLease).parameter(0).toBeUnknown();
  });
});

describe("ports", () => {
  it("ManagedSandboxPort has every lifecycle method, all required", () => {
    expectTypeOf<keyof ManagedSandboxPort>().toEqualTypeOf<
      "capabilities" | "acquire" | "heartbeat" | "suspend" | "terminate" | "reap" | "inspect"
    >();
    expectTypeOf<ManagedSandboxPort["acquire"]>().returns.toEqualTypeOf<
      Promise<ManagedSandboxLease>
    >();
    expectTypeOf<ManagedSandboxPort["heartbeat"]>().returns.toEqualTypeOf<
      Promise<SandboxHeartbeatResult>
    >();
    expectTypeOf<ManagedSandboxPort["suspend"]>().returns.toEqualTypeOf<
      Promise<ManagedSandboxLease>
    >();
    expectTypeOf<ManagedSandboxPort["terminate"]>().returns.toEqualTypeOf<Promise<void>>();
  });

  it("reap needs no fence: it works from a serialized lease", () => {
    type ReapInput = Parameters<ManagedSandboxPort["reap"]>[0];
    expectTypeOf<ReapInput>().not.toHaveProperty("fence");
    expectTypeOf<ReapInput["lease"]>().toEqualTypeOf<ManagedSandboxLease>();
    expectTypeOf<ReapInput["reason"]>().toEqualTypeOf<"completed" | "failed" | "lease_lost">();
  });

  it("acquire receives an abort signal and nullable bindings", () => {
    type AcquireInput = Parameters<ManagedSandboxPort["acquire"]>[0];
    expectTypeOf<AcquireInput["signal"]>().toEqualTypeOf<AbortSignal>();
    expectTypeOf<AcquireInput["outputs"]>().toBeNullable();
    expectTypeOf<AcquireInput["credentialEgress"]>().toBeNullable();
  });

  it("fence results are discriminated unions", () => {
    expectTypeOf<FenceAcquireResult["type"]>().toEqualTypeOf<"acquired" | "conflict">();
    expectTypeOf<FencePublishResult>().toEqualTypeOf<
      { readonly type: "published"; readonly revision: number } | { readonly type: "lost" }
    >();
    expectTypeOf<RuntimeResourceFencePort["publish"]>().returns.toEqualTypeOf<
      Promise<FencePublishResult>
    >();
    expectTypeOf<RuntimeResourceFencePort["publishIfLatest"]>().returns.toEqualTypeOf<
      Promise<FencePublishResult>
    >();
    expectTypeOf<
      Parameters<RuntimeResourceFencePort["publishIfLatest"]>[0]["expectedRevision"]
    >().toEqualTypeOf<number>();
    expectTypeOf<RuntimeResourceFencePort["isCurrent"]>().returns.toEqualTypeOf<Promise<boolean>>();
    expectTypeOf<RuntimeResourceFencePort["isGenerationCurrent"]>()
      .parameter(0)
      .not.toHaveProperty("token");
    expectTypeOf<RuntimeResourceFencePort["isGenerationCurrent"]>()
      .parameter(0)
      .toHaveProperty("ownerId")
      .toEqualTypeOf<string>();
    expectTypeOf<RuntimeResourceFencePort["isGenerationCurrent"]>().returns.toEqualTypeOf<
      Promise<boolean>
    >();
  });

  it("orphan, workspace and driver ports", () => {
    expectTypeOf<RuntimeOrphanPort["list"]>().returns.toEqualTypeOf<
      Promise<readonly RuntimeOrphanRecord[]>
    >();
    expectTypeOf<WorkspacePersistencePort["checkpoint"]>().returns.toEqualTypeOf<
      Promise<WorkspaceCheckpointCandidate>
    >();
    expectTypeOf<ManagedRuntimeProviderDriverPort["create"]>().returns.toEqualTypeOf<
      Promise<ManagedRuntimeProviderResources>
    >();
    expectTypeOf<ManagedRuntimeProviderResources["runtimeCheckpoint"]>().toBeNullable();
    expectTypeOf<ManagedRuntimeProviderResources["sandbox"]>().toEqualTypeOf<ManagedSandboxPort>();
  });
});

describe("errors", () => {
  it("codes and the wire form", () => {
    expectTypeOf<ManagedRuntimeError["code"]>().toEqualTypeOf<ErrorCode>();
    expectTypeOf<ManagedRuntimeErrorJSON["code"]>().toEqualTypeOf<ErrorCode>();
    expectTypeOf(ManagedRuntimeError.fromJSON).returns.toEqualTypeOf<ManagedRuntimeError>();
    expectTypeOf(ManagedRuntimeError.isInstance).guards.toEqualTypeOf<ManagedRuntimeError>();
    expectTypeOf<"timeout">().toExtend<ErrorCode>();
    expectTypeOf<"TIMEOUT">().not.toExtend<ErrorCode>();
  });

  it("forbids secret-bearing context keys by type", () => {
    expectTypeOf<{ runtimeId: string }>().toExtend<ErrorContext>();
    expectTypeOf<{ token: string }>().not.toExtend<ErrorContext>();
    expectTypeOf<{ fenceToken: string }>().not.toExtend<ErrorContext>();
    expectTypeOf<{ nested: { a: 1 } }>().not.toExtend<ErrorContext>();
    // @ts-expect-error a fence token cannot be attached to an error
    new InvalidConfigError({ message: "m", context: { token: "secret" } });
  });
});
