import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { withDeadline } from "@open-managed-agents/runtime-utils";
import { ConformanceFailure, describeError } from "../cases/assertions.js";
import {
  CONFORMANCE_CASES,
  type ConformanceCase,
  type ConformanceCaseId,
} from "../cases/case-catalog.js";
import { createCaseContext } from "../cases/case-context.js";
import { CONFORMANCE_CASE_IMPLEMENTATIONS } from "../cases/case-implementations.js";
import type { ConformanceRowProvenance } from "../catalog/row-provenance.js";
import { type ConformanceSubject, loadConformanceSubject } from "../cases/subject.js";
import { type LeftoverRuntimes, trackStartedRuntimes } from "./started-runtimes.js";
import {
  type ManagedRuntimeConformanceOptions,
  resolveConformanceOptions,
} from "./suite-options.js";

/** Outcome of one case. */
export interface ConformanceCaseResult extends ConformanceCase {
  /** Whether the descriptor claims the capability (core cases always do). */
  readonly claimed: boolean;
  /** `behaviour`: the claimed behaviour was exercised; `fail-closed`: the typed refusal was asserted. */
  readonly verified: "behaviour" | "fail-closed" | "not-run";
  readonly result: "pass" | "fail" | "not-run";
  readonly durationMs: number;
  /** Why the case failed. */
  readonly error?: { readonly name: string; readonly code?: string; readonly message: string };
}

/** A whole conformance run. */
export interface ConformanceReport {
  readonly name: string;
  readonly provider: string;
  readonly version: string;
  /** The contract revision the driver implements: its descriptor's `specificationVersion`. */
  readonly specificationVersion: string;
  readonly placement: string;
  /**
   * The row the `catalog.row` case compares with and where it comes from (derived from a driver in this
   * repository, or declared from the provider's documentation and unverified); null when there is none.
   */
  readonly catalogRow: {
    readonly id: string;
    readonly provenance: ConformanceRowProvenance;
  } | null;
  /** True when every selected case passed and no runtime was left that the runner could not reap. */
  readonly passed: boolean;
  readonly cases: readonly ConformanceCaseResult[];
  /** Runtimes the cases left running (a terminate that threw), which the runner reaped afterwards. */
  readonly leftoverRuntimes: LeftoverRuntimes;
}

/** How long a whole run may take. */
export interface ConformanceRunLimits {
  /**
   * Deadline of the whole run. The case running when it passes fails, the cases after it are `not-run`,
   * and the runtimes already started are reaped. @default no deadline beyond each case's own
   */
  readonly timeoutMs?: number;
}

/**
 * Runs one case against a loaded subject and throws its failure. The vitest suite and the runner both
 * call it, so a case behaves the same under either.
 */
export async function executeConformanceCase(
  subject: ConformanceSubject,
  id: ConformanceCaseId,
  runLeftMs = Infinity,
): Promise<"behaviour" | "fail-closed"> {
  const implementation = CONFORMANCE_CASE_IMPLEMENTATIONS[id];
  const context = createCaseContext(subject, id);
  const claimed = implementation.claimed(subject);
  const work =
    claimed || !implementation.refuse
      ? implementation.verify(context)
      : implementation.refuse(context);
  const { caseMs } = subject.timeouts;
  const ms = Math.max(1, Math.min(caseMs, Math.ceil(runLeftMs)));
  const timeoutError = () =>
    new ConformanceFailure(
      ms < caseMs
        ? `case ${id} was stopped: the run's deadline passed after it ran ${ms} ms`
        : `case ${id} did not finish within ${ms} ms`,
    );
  await withDeadline(work, { ms, timeoutError });
  return claimed ? "behaviour" : "fail-closed";
}

/** Runs one case and reports its outcome instead of throwing. */
export async function runConformanceCase(
  subject: ConformanceSubject,
  id: ConformanceCaseId,
  runLeftMs = Infinity,
): Promise<ConformanceCaseResult> {
  const entry = caseOf(id);
  const claimed = CONFORMANCE_CASE_IMPLEMENTATIONS[id].claimed(subject);
  const started = performance.now();
  try {
    const verified = await executeConformanceCase(subject, id, runLeftMs);
    return { ...entry, claimed, verified, result: "pass", durationMs: elapsed(started) };
  } catch (error) {
    return {
      ...entry,
      claimed,
      verified: claimed ? "behaviour" : "fail-closed",
      result: "fail",
      durationMs: elapsed(started),
      error: summarize(error),
    };
  }
}

/**
 * Loads the driver once and runs the selected cases in catalog order; unselected cases are `not-run`.
 * Afterwards it reaps every runtime a case started and nothing ended (a driver whose terminate threw).
 */
export async function runManagedRuntimeConformance<TFactoryOptions = unknown>(
  options: ManagedRuntimeConformanceOptions<TFactoryOptions>,
  limits: ConformanceRunLimits = {},
): Promise<ConformanceReport> {
  const resolved = resolveConformanceOptions(options);
  const loaded = await loadConformanceSubject(resolved);
  const started = trackStartedRuntimes(loaded.driver);
  const subject: ConformanceSubject = { ...loaded, driver: started.driver };
  const deadline = limits.timeoutMs === undefined ? Infinity : performance.now() + limits.timeoutMs;
  const cases: ConformanceCaseResult[] = [];
  for (const entry of CONFORMANCE_CASES) {
    const left = deadline - performance.now();
    if (!resolved.cases.includes(entry.id) || left <= 0) {
      cases.push({
        ...entry,
        claimed: CONFORMANCE_CASE_IMPLEMENTATIONS[entry.id].claimed(subject),
        verified: "not-run",
        result: "not-run",
        durationMs: 0,
      });
      continue;
    }
    cases.push(await runConformanceCase(subject, entry.id, left));
  }
  const leftoverRuntimes = await started.reapAll({ ms: subject.timeouts.caseMs });
  return {
    name: resolved.name,
    provider: subject.descriptor.provider,
    version: subject.descriptor.version,
    specificationVersion: subject.descriptor.specificationVersion,
    placement: subject.placement,
    catalogRow: subject.expectedRow
      ? { id: subject.expectedRow.id, provenance: subject.expectedRow.provenance }
      : null,
    passed:
      cases.every((entry) => entry.result !== "fail") &&
      cases.some((entry) => entry.result === "pass") &&
      leftoverRuntimes.failed.length === 0,
    cases,
    leftoverRuntimes,
  };
}

function caseOf(id: ConformanceCaseId): ConformanceCase {
  const entry = CONFORMANCE_CASES.find((candidate) => candidate.id === id);
  if (!entry) throw new ConformanceFailure(`unknown conformance case ${id}`);
  return entry;
}

function summarize(error: unknown): NonNullable<ConformanceCaseResult["error"]> {
  const message = withCauses(error);
  if (ManagedRuntimeError.isInstance(error)) return { name: error.name, code: error.code, message };
  if (error instanceof Error) return { name: error.name, message };
  return { name: "NonError", message };
}

/** The message, followed by each cause whose message it does not already quote. */
function withCauses(error: unknown): string {
  let message = error instanceof Error ? error.message : String(error);
  let cause = error instanceof Error ? error.cause : undefined;
  for (let depth = 0; cause !== undefined && depth < 4; depth += 1) {
    const text = cause instanceof Error ? cause.message : String(cause);
    if (!message.includes(text)) message += `; caused by ${describeError(cause)}`;
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return message;
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}
