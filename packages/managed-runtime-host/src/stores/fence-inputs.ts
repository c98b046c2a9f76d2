import * as z from "zod";
import {
  type RuntimeCheckpointRef,
  type RuntimePublicationCandidate,
  type RuntimeResourceFence,
  type RuntimeResourceScope,
  nonEmptyString,
  parseRecord,
  runtimeCheckpointRefSchema,
  runtimePublicationCandidateSchema,
  runtimeResourceFenceSchema,
  runtimeResourceScopeSchema,
  terminationReasonSchema,
} from "@open-managed-agents/runtime-resource-contract";

/** Longest fence time-to-live a store accepts: one day. */
export const MAX_FENCE_TTL_MS = 24 * 60 * 60 * 1000;

const ttlSchema = z.number().int().positive().max(MAX_FENCE_TTL_MS);

const acquireInputSchema = z.object({
  scope: runtimeResourceScopeSchema,
  ownerId: nonEmptyString,
  ttlMs: ttlSchema,
});
const renewInputSchema = z.object({ fence: runtimeResourceFenceSchema, ttlMs: ttlSchema });
const releaseInputSchema = z.object({
  fence: runtimeResourceFenceSchema,
  reason: terminationReasonSchema,
});
const publishInputSchema = z.object({
  fence: runtimeResourceFenceSchema,
  workspaceCandidate: runtimePublicationCandidateSchema,
  outputCandidate: runtimePublicationCandidateSchema.nullable(),
  runtimeCheckpoint: runtimeCheckpointRefSchema.nullable().optional(),
});

const publishIfLatestInputSchema = publishInputSchema.extend({
  expectedRevision: z.number().int().nonnegative(),
});

/** What a publish writes besides generation and revision. */
export interface PublicationBody {
  readonly workspaceCandidate: RuntimePublicationCandidate;
  readonly outputCandidate: RuntimePublicationCandidate | null;
  readonly runtimeCheckpoint: RuntimeCheckpointRef | null;
}

// The parse errors name the failing path and never echo a value, so a token cannot leak through them.
export function parseAcquireInput(input: unknown): {
  scope: RuntimeResourceScope;
  ownerId: string;
  ttlMs: number;
} {
  return parseRecord(acquireInputSchema, input, { record: "fence acquire input" });
}

export function parseRenewInput(input: unknown): { fence: RuntimeResourceFence; ttlMs: number } {
  return parseRecord(renewInputSchema, input, { record: "fence renew input" });
}

export function parseReleaseInput(input: unknown): { fence: RuntimeResourceFence } {
  return parseRecord(releaseInputSchema, input, { record: "fence release input" });
}

const generationInputSchema = z.object({
  scope: runtimeResourceScopeSchema,
  generation: z.number().int().positive(),
  ownerId: z.string().min(1),
});

export function parseGenerationInput(input: unknown): {
  scope: RuntimeResourceScope;
  generation: number;
  ownerId: string;
} {
  return parseRecord(generationInputSchema, input, { record: "fence generation input" });
}

export function parseFence(fence: unknown): RuntimeResourceFence {
  return parseRecord(runtimeResourceFenceSchema, fence, { record: "fence" });
}

export function parsePublishInput(input: unknown): {
  fence: RuntimeResourceFence;
  body: PublicationBody;
} {
  const parsed = parseRecord(publishInputSchema, input, { record: "fence publish input" });
  return {
    fence: parsed.fence,
    body: {
      workspaceCandidate: parsed.workspaceCandidate,
      outputCandidate: parsed.outputCandidate,
      runtimeCheckpoint: parsed.runtimeCheckpoint ?? null,
    },
  };
}

export function parsePublishIfLatestInput(input: unknown): {
  fence: RuntimeResourceFence;
  expectedRevision: number;
  body: PublicationBody;
} {
  const { expectedRevision, ...rest } = parseRecord(publishIfLatestInputSchema, input, {
    record: "fence publishIfLatest input",
  });
  return { ...parsePublishInput(rest), expectedRevision };
}

/** A fresh fence token: a random UUID plus 16 more random bytes. Secret. */
export function createFenceToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `${crypto.randomUUID()}.${[...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("")}`;
}

/** The fence and publication key: one row per session. */
export function sessionKey(scope: RuntimeResourceScope): string {
  return JSON.stringify([scope.workspaceId, scope.environmentId, scope.sessionId]);
}
