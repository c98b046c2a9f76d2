import * as z from "zod";
import { nonEmptyString } from "./json.js";
import { type RuntimeResourceScope, runtimeResourceScopeSchema } from "./scope.js";

/** Usage kinds a ledger accepts. Drivers emit only what they measured; none guesses a duration. */
export const USAGE_KINDS = ["sandbox_active_seconds"] as const;

/** One of {@link USAGE_KINDS}. */
export type UsageKind = (typeof USAGE_KINDS)[number];

/** Most seconds one usage record may carry: 24 hours. Longer spans are clamped to it. */
export const MAX_USAGE_SECONDS_PER_EMIT = 86_400;

/**
 * One measured span of usage, as a driver emits it. `sandbox_active_seconds` runs from the container's
 * start to its stop as the driver saw them; the value is whole seconds, clamped to
 * {@link MAX_USAGE_SECONDS_PER_EMIT}. Holds no token, key or credential.
 */
export interface UsageRecord {
  readonly kind: UsageKind;
  /** Whole seconds, 0 to {@link MAX_USAGE_SECONDS_PER_EMIT}. */
  readonly value: number;
  /** Provider id of the runtime (the driver descriptor's `provider`). */
  readonly provider: string;
  readonly runtimeId: string;
  /** The work item that started the runtime. */
  readonly scope: RuntimeResourceScope;
  /** The provider's instance type the runtime ran on, when the driver knows it (e.g. `standard-1`). */
  readonly instanceType: string | null;
  /** ISO 8601 UTC. */
  readonly startedAt: string;
  /** ISO 8601 UTC; the record belongs to this instant's UTC day. */
  readonly stoppedAt: string;
}

/** Schema for {@link UsageRecord}. */
export const usageRecordSchema = z
  .object({
    kind: z.enum(USAGE_KINDS),
    value: z.number().int().min(0).max(MAX_USAGE_SECONDS_PER_EMIT),
    provider: nonEmptyString,
    runtimeId: nonEmptyString,
    scope: runtimeResourceScopeSchema,
    instanceType: nonEmptyString.nullable(),
    startedAt: z.iso.datetime(),
    stoppedAt: z.iso.datetime(),
  })
  .strict();

/**
 * Where a driver emits usage; the deployer supplies it (a D1 table, a queue, a billing service). Drivers
 * call it best-effort: a failing or hanging recorder never blocks or fails teardown, and a record the
 * recorder did not take is lost rather than retried into a guess.
 */
export interface UsageRecorderPort {
  /** Stores one record. May reject; the driver swallows the failure. */
  record(record: UsageRecord): Promise<void>;
}

/** Whole seconds between two instants, never negative, clamped to {@link MAX_USAGE_SECONDS_PER_EMIT}. */
export function activeSeconds(startedAtMs: number, stoppedAtMs: number): number {
  return Math.min(
    MAX_USAGE_SECONDS_PER_EMIT,
    Math.max(0, Math.floor((stoppedAtMs - startedAtMs) / 1000)),
  );
}
