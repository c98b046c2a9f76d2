import * as z from "zod";
import {
  type ManagedSandboxLease,
  type RuntimeResourceScope,
  managedSandboxLeaseSchema,
  nonEmptyString,
  parseRecord,
  runtimeResourceScopeSchema,
} from "@open-managed-agents/runtime-resource-contract";
import { MAX_ORPHAN_LIST_LIMIT } from "./orphan-inputs.js";

const recordInputSchema = z.object({
  scope: runtimeResourceScopeSchema,
  generation: z.number().int().nonnegative(),
  ownerId: nonEmptyString,
  sandbox: managedSandboxLeaseSchema,
});

const listSessionInputSchema = z.object({
  scope: runtimeResourceScopeSchema,
  limit: z.number().int().positive().max(MAX_ORPHAN_LIST_LIMIT),
});

const startRevisionInputSchema = z.object({
  id: nonEmptyString,
  startRevision: z.number().int().nonnegative().nullable(),
});

/** A validated journal record request. */
export interface JournalRecordRequest {
  readonly scope: RuntimeResourceScope;
  readonly generation: number;
  readonly ownerId: string;
  readonly sandbox: ManagedSandboxLease;
}

/** Journal `list`, `failed` and `resolve` take the orphan queue's inputs; only `record` differs. */
export function parseJournalRecordInput(input: unknown): JournalRecordRequest {
  return parseRecord(recordInputSchema, input, { record: "sandbox journal record input" });
}

/** A validated `setStartRevision` request. */
export function parseStartRevisionInput(input: unknown): {
  id: string;
  startRevision: number | null;
} {
  return parseRecord(startRevisionInputSchema, input, {
    record: "sandbox journal start revision input",
  });
}

/** A validated `listSession` request. */
export function parseListSessionInput(input: unknown): {
  scope: RuntimeResourceScope;
  limit: number;
} {
  return parseRecord(listSessionInputSchema, input, {
    record: "sandbox journal listSession input",
  });
}

/** Whether two scopes name the same session (workspace, environment and session; any work item). */
export function sameSession(a: RuntimeResourceScope, b: RuntimeResourceScope): boolean {
  return (
    a.workspaceId === b.workspaceId &&
    a.environmentId === b.environmentId &&
    a.sessionId === b.sessionId
  );
}
