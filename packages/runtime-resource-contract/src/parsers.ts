import type * as z from "zod";
import { parseRecord } from "./errors/parse-record.js";
import type { ErrorCode } from "./errors/error-codes.js";
import {
  type RuntimeCheckpointRef,
  type SandboxCheckpointHandle,
  runtimeCheckpointRefSchema,
  sandboxCheckpointHandleSchema,
} from "./checkpoint.js";
import {
  type RuntimePublicationCandidate,
  type RuntimeResourcePublication,
  runtimePublicationCandidateSchema,
  runtimeResourcePublicationSchema,
} from "./fence.js";
import { type RuntimeOrphanRecord, runtimeOrphanRecordSchema } from "./orphan.js";
import { type SandboxJournalRecord, sandboxJournalRecordSchema } from "./sandbox-journal.js";
import {
  type SessionOutputEntryCandidate,
  type SessionOutputManifestCandidate,
  sessionOutputEntryCandidateSchema,
  sessionOutputManifestCandidateSchema,
} from "./outputs.js";
import {
  type ManagedRuntimePlan,
  type ManagedRuntimeProfile,
  managedRuntimePlanSchema,
  managedRuntimeProfileSchema,
} from "./profile.js";
import {
  type ManagedRuntimeProviderDriverDescriptor,
  managedRuntimeProviderDriverDescriptorSchema,
} from "./provider-driver.js";
import { type RuntimeEnvironment, runtimeEnvironmentSchema } from "./runtime-environment.js";
import { type ManagedSandboxLease, managedSandboxLeaseSchema } from "./sandbox.js";
import { type RuntimeResourceScope, runtimeResourceScopeSchema } from "./scope.js";
import {
  type HarnessSupervisorCommand,
  type HarnessSupervisorEvent,
  harnessSupervisorCommandSchema,
  harnessSupervisorEventSchema,
} from "./supervisor.js";
import {
  type WorkspaceCheckpointCandidate,
  workspaceCheckpointCandidateSchema,
} from "./workspace.js";

// Each schema must produce exactly the hand-written interface; these assignments fail to compile otherwise.
const schemaChecks: {
  lease: z.ZodType<ManagedSandboxLease>;
  scope: z.ZodType<RuntimeResourceScope>;
  orphan: z.ZodType<RuntimeOrphanRecord>;
  journal: z.ZodType<SandboxJournalRecord>;
  candidate: z.ZodType<RuntimePublicationCandidate>;
  publication: z.ZodType<RuntimeResourcePublication>;
  workspaceCandidate: z.ZodType<WorkspaceCheckpointCandidate>;
  outputEntry: z.ZodType<SessionOutputEntryCandidate>;
  outputManifest: z.ZodType<SessionOutputManifestCandidate>;
  checkpointRef: z.ZodType<RuntimeCheckpointRef>;
  checkpointHandle: z.ZodType<SandboxCheckpointHandle>;
  descriptor: z.ZodType<ManagedRuntimeProviderDriverDescriptor>;
  profile: z.ZodType<ManagedRuntimeProfile>;
  plan: z.ZodType<ManagedRuntimePlan>;
  supervisorCommand: z.ZodType<HarnessSupervisorCommand>;
  supervisorEvent: z.ZodType<HarnessSupervisorEvent>;
  runtimeEnvironment: z.ZodType<RuntimeEnvironment>;
} = {
  lease: managedSandboxLeaseSchema,
  scope: runtimeResourceScopeSchema,
  orphan: runtimeOrphanRecordSchema,
  journal: sandboxJournalRecordSchema,
  candidate: runtimePublicationCandidateSchema,
  publication: runtimeResourcePublicationSchema,
  workspaceCandidate: workspaceCheckpointCandidateSchema,
  outputEntry: sessionOutputEntryCandidateSchema,
  outputManifest: sessionOutputManifestCandidateSchema,
  checkpointRef: runtimeCheckpointRefSchema,
  checkpointHandle: sandboxCheckpointHandleSchema,
  descriptor: managedRuntimeProviderDriverDescriptorSchema,
  profile: managedRuntimeProfileSchema,
  plan: managedRuntimePlanSchema,
  supervisorCommand: harnessSupervisorCommandSchema,
  supervisorEvent: harnessSupervisorEventSchema,
  runtimeEnvironment: runtimeEnvironmentSchema,
};

/** Optional override of the thrown code; wire payloads from a peer use `upstream_protocol`. */
export interface ParseOptions {
  readonly code?: ErrorCode;
}

const parse =
  <K extends keyof typeof schemaChecks>(key: K, record: string) =>
  (input: unknown, options: ParseOptions = {}): z.output<(typeof schemaChecks)[K]> =>
    parseRecord(schemaChecks[key], input, { record, ...options }) as z.output<
      (typeof schemaChecks)[K]
    >;

/** Parses a sandbox lease; throws `invalid_request` naming the failing path. */
export const parseManagedSandboxLease = parse("lease", "sandbox lease");
/** Parses a work-item scope. */
export const parseRuntimeResourceScope = parse("scope", "scope");
/** Parses an orphan record. */
export const parseRuntimeOrphanRecord = parse("orphan", "orphan record");
/** Parses a sandbox journal record. */
export const parseSandboxJournalRecord = parse("journal", "sandbox journal record");
/** Parses a publication candidate. */
export const parseRuntimePublicationCandidate = parse("candidate", "publication candidate");
/** Parses a stored publication. */
export const parseRuntimeResourcePublication = parse("publication", "publication");
/** Parses a workspace checkpoint candidate. */
export const parseWorkspaceCheckpointCandidate = parse(
  "workspaceCandidate",
  "workspace checkpoint candidate",
);
/** Parses one output entry. */
export const parseSessionOutputEntryCandidate = parse("outputEntry", "output entry");
/** Parses an output manifest candidate. */
export const parseSessionOutputManifestCandidate = parse(
  "outputManifest",
  "output manifest candidate",
);
/** Parses a runtime checkpoint ref. */
export const parseRuntimeCheckpointRef = parse("checkpointRef", "runtime checkpoint ref");
/** Parses a sandbox checkpoint handle. */
export const parseSandboxCheckpointHandle = parse("checkpointHandle", "sandbox checkpoint handle");
/** Parses a driver descriptor. */
export const parseManagedRuntimeProviderDriverDescriptor = parse("descriptor", "driver descriptor");
/** Parses a runtime profile. */
export const parseManagedRuntimeProfile = parse("profile", "runtime profile");
/** Parses a runtime plan. */
export const parseManagedRuntimePlan = parse("plan", "runtime plan");
/** Parses a supervisor command line. */
export const parseHarnessSupervisorCommand = parse("supervisorCommand", "supervisor command");
/** Parses a supervisor event line. */
export const parseHarnessSupervisorEvent = parse("supervisorEvent", "supervisor event");
/** Parses a runtime environment declaration. */
export const parseRuntimeEnvironment = parse("runtimeEnvironment", "runtime environment");
