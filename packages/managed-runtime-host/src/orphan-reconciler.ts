import * as z from "zod";
import {
  ManagedRuntimeError,
  type RuntimeOrphanPort,
  type RuntimeOrphanRecord,
  type RuntimeResourceFencePort,
  type SandboxJournalPort,
  type SandboxJournalRecord,
  jitteredBackoffMs,
  parseRecord,
  redactSecrets,
} from "@open-managed-agents/runtime-resource-contract";
import { functionSchema } from "@open-managed-agents/runtime-utils";
import { type ReconcilerSandbox, reapAndConfirm } from "./reconciler/confirm-gone.js";
import { type JournalReconcileSummary, reapJournal } from "./reconciler/reap-journal.js";
import type { ReconcilerSalvage, SalvageOutcome } from "./reconciler/salvage-sandbox.js";
import { clockSchema, hasMethods } from "./stores/store-options.js";
import { MAX_ORPHAN_LIST_LIMIT } from "./stores/orphan-inputs.js";
import { type Clock, type Scheduler, systemClock, systemScheduler } from "./time.js";

/** Exponential backoff between reap attempts of one orphan. */
export interface OrphanReapBackoff {
  /** Delay after the first failure (the failed terminate). @default 10_000 */
  readonly baseMs?: number;
  /** Upper bound of the delay. @default 3_600_000 */
  readonly maxMs?: number;
  /** Fraction (0–1) of the delay removed at random, so reconcilers spread out. @default 0.2 */
  readonly jitter?: number;
}

/** Options of {@link createManagedRuntimeOrphanReconciler}. */
export interface ManagedRuntimeOrphanReconcilerOptions {
  readonly orphans: RuntimeOrphanPort;
  /**
   * Reaps from a serialized lease, never with a fence token. With `inspect`, a reap counts only once the
   * provider no longer reports the runtime `running` or `suspended`; otherwise the record stays, with backoff.
   */
  readonly sandbox: ReconcilerSandbox;
  /** The write-ahead sandbox journal; its records are reaped once their run no longer holds the fence. Needs `fences`. */
  readonly journal?: SandboxJournalPort;
  /**
   * Answers whether a journaled run still holds the fence; required with `journal`. With `salvage` it
   * also needs `acquire`, `publishIfLatest` and `release`.
   */
  readonly fences?: Pick<RuntimeResourceFencePort, "isGenerationCurrent"> &
    Partial<Pick<RuntimeResourceFencePort, "acquire" | "publishIfLatest" | "release">>;
  /**
   * Salvages a journaled sandbox whose run's host is gone before it is reaped (see docs/host.md, "Salvage"):
   * the driver's harness and workspace ports, from `createDriverSalvage`. Needs `journal`.
   */
  readonly salvage?: ReconcilerSalvage;
  /** Owner id of the fences a salvage takes. @default "orphan-reconciler" */
  readonly ownerId?: string;
  /** Time-to-live of a salvage's fence: ending the harness, the checkpoint and the publish fit in it. @default 600_000 */
  readonly salvageLeaseTtlMs?: number;
  /** Called with what each salvage did (for logs and metrics). */
  readonly onSalvage?: (record: SandboxJournalRecord, outcome: SalvageOutcome) => void;
  /** Attempts (the failed terminate included) after which a record is left listed and no longer reaped. @default 8 */
  readonly maxAttempts?: number;
  readonly backoff?: OrphanReapBackoff;
  /** Waits between passes of {@link ManagedRuntimeOrphanReconciler.run}. @default systemScheduler */
  readonly scheduler?: Scheduler;
  /** Decides which records are due. @default systemClock */
  readonly clock?: Clock;
  /** Uniform random number in [0, 1) for jitter. @default Math.random */
  readonly random?: () => number;
  /** Strings replaced by `[redacted]` in stored error messages, such as provider API keys. */
  readonly secrets?: readonly string[];
}

/** What one pass did. */
export interface OrphanReconcileSummary {
  /** Records reaped and resolved. */
  readonly reaped: number;
  /** Records whose reap failed and that will be retried. */
  readonly failed: number;
  /** Records whose reap failed for the last allowed time in this pass; they stay listed. */
  readonly givenUp: number;
  /** Records waiting for their backoff delay. */
  readonly deferred: number;
  /** Records given up in an earlier pass, skipped. */
  readonly exhausted: number;
  /** The sandbox journal's part of the pass; present when the reconciler has a journal. */
  readonly journal?: JournalReconcileSummary;
}

/** Reaps orphaned runtimes with bounded retries and backoff. */
export interface ManagedRuntimeOrphanReconciler {
  /** One pass: reaps up to `limit` due records, oldest first, and stops early when `signal` aborts. */
  runOnce(input: {
    readonly limit: number;
    readonly signal?: AbortSignal;
  }): Promise<OrphanReconcileSummary>;
  /**
   * Runs passes every `intervalMs` until `signal` aborts, then resolves. A failing pass goes to
   * `onError` and the loop goes on; without `onError` the loop rejects with it.
   */
  run(input: {
    readonly limit: number;
    readonly intervalMs: number;
    readonly signal: AbortSignal;
    readonly onError?: (error: unknown) => void;
  }): Promise<void>;
}

const optionsSchema = z
  .object({
    orphans: z.custom<RuntimeOrphanPort>(
      (value) => hasMethods(value, ["enqueue", "list", "failed", "resolve"]),
      "must be a RuntimeOrphanPort",
    ),
    sandbox: z.custom<ReconcilerSandbox>(
      (value) => hasMethods(value, ["reap"]),
      "must have a reap() method",
    ),
    journal: z
      .custom<SandboxJournalPort>(
        (value) => hasMethods(value, ["record", "list", "failed", "resolve"]),
        "must be a SandboxJournalPort",
      )
      .optional(),
    fences: z
      .custom<NonNullable<ManagedRuntimeOrphanReconcilerOptions["fences"]>>(
        (value) => hasMethods(value, ["isGenerationCurrent"]),
        "must have an isGenerationCurrent() method",
      )
      .optional(),
    salvage: z
      .custom<ReconcilerSalvage>(
        (value) =>
          hasMethods(value, ["endAbandoned"]) &&
          hasMethods((value as ReconcilerSalvage).workspace, [
            "materialize",
            "checkpoint",
            "release",
          ]),
        "must have endAbandoned() and a workspace port",
      )
      .optional(),
    ownerId: z.string().min(1).default("orphan-reconciler"),
    salvageLeaseTtlMs: z
      .number()
      .int()
      .positive()
      .max(24 * 60 * 60 * 1000)
      .default(600_000),
    onSalvage:
      functionSchema<(record: SandboxJournalRecord, outcome: SalvageOutcome) => void>().optional(),
    maxAttempts: z.number().int().min(1).max(1000).default(8),
    backoff: z
      .object({
        baseMs: z.number().int().nonnegative().default(10_000),
        maxMs: z.number().int().nonnegative().default(3_600_000),
        jitter: z.number().min(0).max(1).default(0.2),
      })
      .refine((backoff) => backoff.maxMs >= backoff.baseMs, {
        message: "maxMs must not be below baseMs",
        path: ["maxMs"],
      })
      .default({ baseMs: 10_000, maxMs: 3_600_000, jitter: 0.2 }),
    scheduler: z
      .custom<Scheduler>(
        (value) => hasMethods(value, ["sleep"]),
        "must be a Scheduler with sleep()",
      )
      .optional(),
    clock: clockSchema.optional(),
    random: functionSchema<() => number>().optional(),
    secrets: z.array(z.string()).default([]),
  })
  .refine((options) => options.journal === undefined || options.fences !== undefined, {
    message: "is required with journal",
    path: ["fences"],
  })
  .refine((options) => options.salvage === undefined || options.journal !== undefined, {
    message: "needs journal",
    path: ["salvage"],
  })
  .refine(
    (options) =>
      options.salvage === undefined ||
      hasMethods(options.fences, ["acquire", "publishIfLatest", "release"]),
    {
      message: "needs acquire(), publishIfLatest() and release() for salvage",
      path: ["fences"],
    },
  );

const runOnceSchema = z.object({
  limit: z.number().int().positive().max(MAX_ORPHAN_LIST_LIMIT),
  signal: z.instanceof(AbortSignal).optional(),
});

/**
 * Creates a reconciler for orphaned runtimes. A record with `n` attempts is due `delay(n)` after its
 * latest attempt, where `delay(n) = min(maxMs, baseMs · 2^(n−1))` less up to `jitter` of it. A due
 * record is reaped (safe to repeat: a gone runtime is success) and resolved; a failure records the
 * attempt and the redacted message, never the error object. At `maxAttempts` the record stays listed,
 * its message prefixed with `gave up after n attempts:`, and later passes skip it.
 *
 * With a `journal`, each pass then reaps journaled sandboxes whose run no longer holds the fence (the run
 * crashed, lost its lease or could not confirm terminate), with the same backoff and limits, and never one a
 * live run still holds, at its journaled generation or a later one its live checkpoints rotated to. With `salvage`, a journaled sandbox whose `ama_worker` run's
 * host is gone has its workspace checkpointed and published first, if nothing newer was published meanwhile.
 */
export function createManagedRuntimeOrphanReconciler(
  options: ManagedRuntimeOrphanReconcilerOptions,
): ManagedRuntimeOrphanReconciler {
  const config = parseRecord(optionsSchema, options, {
    record: "orphan reconciler options",
    code: "invalid_config",
  });
  const { orphans, sandbox, maxAttempts, backoff, secrets } = config;
  const clock = config.clock ?? systemClock;
  const scheduler = config.scheduler ?? systemScheduler;
  const random = config.random ?? Math.random;

  const dueAt = (record: Pick<RuntimeOrphanRecord, "attempts" | "updatedAt">): number => {
    return (
      Date.parse(record.updatedAt) +
      jitteredBackoffMs({
        attempt: record.attempts - 1,
        baseMs: backoff.baseMs,
        maxMs: backoff.maxMs,
        jitter: backoff.jitter,
        random,
      })
    );
  };

  // Records given up or not yet due may fill the oldest-first window; widen it until `limit` due records show.
  const listDue = async (limit: number, now: number) => {
    for (let window = limit; ; window = Math.min(window * 2, MAX_ORPHAN_LIST_LIMIT)) {
      const records = await orphans.list({ limit: window });
      const exhausted = records.filter((record) => record.attempts >= maxAttempts);
      const pending = records.filter((record) => record.attempts < maxAttempts);
      const due = pending.filter((record) => dueAt(record) <= now);
      if (due.length >= limit || records.length < window || window >= MAX_ORPHAN_LIST_LIMIT) {
        return {
          due: due.slice(0, limit),
          deferred: pending.length - due.length,
          exhausted: exhausted.length,
        };
      }
    }
  };

  const reapOne = async (record: RuntimeOrphanRecord): Promise<"reaped" | "failed" | "givenUp"> => {
    try {
      await reapAndConfirm(sandbox, {
        scope: record.scope,
        lease: record.sandbox,
        reason: record.reason,
      });
      await orphans.resolve({ id: record.id });
      return "reaped";
    } catch (error) {
      const attempts = record.attempts + 1;
      const message = redactSecrets(describeError(error), secrets);
      const givenUp = attempts >= maxAttempts;
      await orphans.failed({
        id: record.id,
        error: givenUp ? `gave up after ${attempts} attempts: ${message}` : message,
      });
      return givenUp ? "givenUp" : "failed";
    }
  };

  const runOnce: ManagedRuntimeOrphanReconciler["runOnce"] = async (input) => {
    const { limit, signal } = parseRecord(runOnceSchema, input, {
      record: "orphan reconciler runOnce input",
    });
    const counts: { -readonly [K in Exclude<keyof OrphanReconcileSummary, "journal">]: number } = {
      reaped: 0,
      failed: 0,
      givenUp: 0,
      deferred: 0,
      exhausted: 0,
    };
    if (signal?.aborted) return counts;
    const { due, deferred, exhausted } = await listDue(limit, clock.now());
    counts.deferred = deferred;
    counts.exhausted = exhausted;
    for (const record of due) {
      if (signal?.aborted) break;
      counts[await reapOne(record)] += 1;
    }
    if (!config.journal || !config.fences || signal?.aborted) return counts;
    const describe = (error: unknown) => redactSecrets(describeError(error), secrets);
    const { fences, salvage } = config;
    const salvager =
      salvage && fences.acquire && fences.publishIfLatest && fences.release
        ? {
            salvage,
            fences: fences as Pick<
              RuntimeResourceFencePort,
              "acquire" | "publishIfLatest" | "release"
            >,
            ownerId: config.ownerId,
            leaseTtlMs: config.salvageLeaseTtlMs,
            describe,
          }
        : undefined;
    const journal = await reapJournal(
      {
        journal: config.journal,
        fences,
        sandbox,
        maxAttempts,
        dueAt,
        describe,
        ...(salvager ? { salvager } : {}),
        ...(config.onSalvage ? { onSalvage: config.onSalvage } : {}),
      },
      { limit, now: clock.now(), ...(signal ? { signal } : {}) },
    );
    return { ...counts, journal };
  };

  return {
    runOnce,
    async run({ limit, intervalMs, signal, onError }) {
      while (!signal.aborted) {
        try {
          await runOnce({ limit, signal });
        } catch (error) {
          if (!onError) throw error;
          onError(error);
        }
        // Never sleep on a fired signal: a scheduler that only listens for a future abort would not wake.
        if (signal.aborted) return;
        try {
          await scheduler.sleep(intervalMs, signal);
        } catch (error) {
          if (signal.aborted) return;
          throw error;
        }
      }
    },
  };
}

/** A message for any thrown value; error objects themselves are never stored. */
function describeError(error: unknown): string {
  if (ManagedRuntimeError.isInstance(error)) return `${error.code}: ${error.message}`;
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  if (typeof error === "string") return error;
  return `non-error value thrown (${error === null ? "null" : typeof error})`;
}
