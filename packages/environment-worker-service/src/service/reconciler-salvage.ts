import type {
  LogFields,
  ReconcilerSalvage,
  SalvageOutcome,
} from "@open-managed-agents/managed-runtime-host";
import {
  CapabilityUnsupportedError,
  type ManagedRuntimeProfile,
  type SandboxJournalRecord,
} from "@open-managed-agents/runtime-resource-contract";
import type { Composition } from "./compose.js";

/**
 * The salvage ports of the reconciler: the driver's harness port (`endAbandoned`) and workspace port,
 * prepared for the journal record's own scope with the deployment's profile.
 */
export function reconcilerSalvage(
  composition: Pick<Composition, "prepare">,
  profile: ManagedRuntimeProfile,
): ReconcilerSalvage {
  const portsOf = async (scope: Parameters<Composition["prepare"]>[0]) =>
    (await composition.prepare(scope, profile)).resources;
  return {
    async endAbandoned(input) {
      const { harnessDriver } = await portsOf(input.scope);
      if (!harnessDriver.endAbandoned) {
        throw new CapabilityUnsupportedError({
          message: "the driver cannot end an abandoned harness",
        });
      }
      await harnessDriver.endAbandoned(input);
    },
    workspace: {
      materialize: async (input) => (await portsOf(input.scope)).workspace.materialize(input),
      checkpoint: async (input) => (await portsOf(input.scope)).workspace.checkpoint(input),
      release: async (input) => (await portsOf(input.scope)).workspace.release(input),
    },
  };
}

/** The fields of a `reconciler.salvage` log line: what was salvaged and how it ended (never a token). */
export function salvageLogFields(record: SandboxJournalRecord, outcome: SalvageOutcome): LogFields {
  return {
    sessionId: record.scope.sessionId,
    workId: record.scope.workId,
    runtimeId: record.sandbox.runtimeId,
    startRevision: record.startRevision,
    outcome: outcome.type,
    ...(outcome.type === "salvaged"
      ? { revision: outcome.revision, generation: outcome.generation }
      : {}),
    ...(outcome.type === "failed" ? { message: outcome.message } : {}),
  };
}
