import type { WorkItemReport } from "@open-managed-agents/managed-environment-worker";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** The service's Prometheus metrics, on a registry of its own. */
export interface ServiceMetrics {
  readonly registry: Registry;
  readonly items: Counter<"lane" | "outcome">;
  readonly stepDuration: Histogram<"port" | "call" | "result">;
  readonly sandboxesAlive: Gauge;
  readonly orphansPending: Gauge;
  readonly journalPending: Gauge;
  readonly transferBytes: Counter<"phase">;
  /** Workspace entries moved, counted from drivers that report them. */
  readonly transferEntries: Counter<"phase">;
  readonly transferDuration: Histogram<"phase" | "result">;
  readonly verificationFailures: Counter<"phase">;
  readonly apiFailures: Counter<"operation">;
  readonly reconcilerRecords: Counter<"kind" | "result">;
  readonly sweptObjects: Counter<"result">;
  /** Counts one finished item. */
  recordItem(report: WorkItemReport): void;
}

/** How an item ended, as one label value: the host's result type when it ran, else the worker's outcome. */
export function outcomeLabel(report: WorkItemReport): string {
  return report.outcome.type === "ran" ? report.outcome.result.type : report.outcome.type;
}

export function createServiceMetrics(
  options: { readonly pendingCounts?: () => Promise<{ orphans: number; journal: number }> } = {},
): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "oma_" });
  const durations = [0.05, 0.25, 1, 2.5, 5, 10, 30, 60, 120, 300, 900];
  let pending: Promise<{ orphans: number; journal: number }> | null = null;
  const readPending = () => {
    pending ??= (options.pendingCounts?.() ?? Promise.resolve({ orphans: 0, journal: 0 })).finally(
      () => {
        pending = null;
      },
    );
    return pending;
  };
  const items = new Counter({
    name: "oma_work_items_total",
    help: "Claimed work items done with, by lane and outcome",
    labelNames: ["lane", "outcome"],
    registers: [registry],
  });
  const metrics: ServiceMetrics = {
    registry,
    items,
    stepDuration: new Histogram({
      name: "oma_transaction_step_duration_seconds",
      help: "Duration of each port call the host's transaction makes",
      labelNames: ["port", "call", "result"],
      buckets: durations,
      registers: [registry],
    }),
    sandboxesAlive: new Gauge({
      name: "oma_sandboxes_alive",
      help: "Sandboxes acquired and not yet terminated by this process",
      registers: [registry],
    }),
    orphansPending: new Gauge({
      name: "oma_orphans_pending",
      help: "Orphaned runtimes waiting to be reaped (store-wide)",
      registers: [registry],
      async collect() {
        this.set((await readPending()).orphans);
      },
    }),
    journalPending: new Gauge({
      name: "oma_journal_records_pending",
      help: "Sandbox journal records not yet resolved (store-wide)",
      registers: [registry],
      async collect() {
        this.set((await readPending()).journal);
      },
    }),
    transferBytes: new Counter({
      name: "oma_checkpoint_transfer_bytes_total",
      help: "Bytes moved by workspace checkpoints and restores",
      labelNames: ["phase"],
      registers: [registry],
    }),
    transferEntries: new Counter({
      name: "oma_checkpoint_transfer_entries_total",
      help: "Workspace entries moved by checkpoints and restores (from drivers that report entries)",
      labelNames: ["phase"],
      registers: [registry],
    }),
    transferDuration: new Histogram({
      name: "oma_checkpoint_transfer_duration_seconds",
      help: "Duration of workspace checkpoints and restores",
      labelNames: ["phase", "result"],
      buckets: durations,
      registers: [registry],
    }),
    verificationFailures: new Counter({
      name: "oma_verification_failures_total",
      help: "Checkpoints or restores refused by verification (integrity_failed, archive_rejected)",
      labelNames: ["phase"],
      registers: [registry],
    }),
    apiFailures: new Counter({
      name: "oma_work_api_failures_total",
      help: "Failed Work API polls and drains",
      labelNames: ["operation"],
      registers: [registry],
    }),
    reconcilerRecords: new Counter({
      name: "oma_reconciler_records_total",
      help: "Orphan and journal records handled by the reconciler",
      labelNames: ["kind", "result"],
      registers: [registry],
    }),
    sweptObjects: new Counter({
      name: "oma_checkpoint_sweep_objects_total",
      help: "Checkpoint objects kept or deleted by the sweep",
      labelNames: ["result"],
      registers: [registry],
    }),
    recordItem(report) {
      items.inc({ lane: report.lane ?? "none", outcome: outcomeLabel(report) });
    },
  };
  return metrics;
}
