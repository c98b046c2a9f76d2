/**
 * Checkpoint and restore progress carries the entries a driver reports: the service's lines print them and
 * `/metrics` counts them. The driver here is a workspace port that reports through the `onProgress` the
 * service hands every driver factory, as a driver that counts entries does; the service's own pieces (the
 * progress joiner, the port instrumentation, the Prometheus registry) are the real ones.
 */
import type { HostLogger } from "@open-managed-agents/managed-runtime-host";
import { describe, expect, it } from "vitest";
import { instrumentPort } from "../src/metrics/instrument-ports.js";
import { createServiceMetrics } from "../src/metrics/metrics.js";
import { type DriverProgress, createTransferProgress } from "../src/metrics/transfer-progress.js";

interface Line {
  readonly event: string;
  readonly fields: Record<string, unknown>;
}

function harness() {
  const lines: Line[] = [];
  const record = (event: string, fields: Record<string, unknown>) => lines.push({ event, fields });
  const logger: HostLogger = { info: record, warn: record, error: record };
  const metrics = createServiceMetrics();
  const progress = createTransferProgress(logger, { stepBytes: 1024, stepEntries: 100 });
  const onProgress = (report: DriverProgress) => progress.report(report);
  const context = { metrics, logger, progress, progressIntervalMs: 60_000 };
  const counted = async (phase: string) => {
    const text = await metrics.registry.metrics();
    const match = new RegExp(
      `^oma_checkpoint_transfer_entries_total\\{phase="${phase}"\\} (\\S+)`,
      "m",
    ).exec(text);
    return match ? Number(match[1]) : 0;
  };
  return { lines, onProgress, context, counted };
}

/** A driver's workspace port whose checkpoint walks `entries` entries of 100 bytes, reporting as it goes. */
function reportingWorkspace(
  onProgress: (report: DriverProgress) => void,
  reports: readonly Partial<DriverProgress>[],
) {
  return {
    async checkpoint(_input: { scope: { sessionId: string } }) {
      for (const report of reports) {
        await new Promise((resolve) => setImmediate(resolve));
        onProgress({ phase: "checkpoint", sandboxId: "sandbox-1", bytes: 0, ...report });
      }
      return { id: "candidate-1", metadata: {} };
    },
  };
}

const scope = { sessionId: "session-1" };

describe("progress with entries", () => {
  it("prints the entries while a checkpoint runs and when it ends, and counts them", async () => {
    const { lines, onProgress, context, counted } = harness();
    const reports = [
      { bytes: 600, entries: 60, totalEntries: 250 },
      { bytes: 1_200, entries: 120, totalEntries: 250 },
      { bytes: 1_300, entries: 250, totalEntries: 250 },
    ];
    const workspace = instrumentPort("workspace", reportingWorkspace(onProgress, reports), context);
    await workspace.checkpoint({ scope });
    const transfers = lines
      .filter((line) => line.event === "checkpoint.transfer")
      .map((line) => line.fields);
    // One line once 1 KiB moved (bytes), one once 100 more entries were done (entries alone).
    expect(transfers).toEqual([
      {
        sessionId: "session-1",
        bytes: 1_200,
        totalBytes: null,
        objects: 0,
        entries: 120,
        totalEntries: 250,
      },
      {
        sessionId: "session-1",
        bytes: 1_300,
        totalBytes: null,
        objects: 0,
        entries: 250,
        totalEntries: 250,
      },
    ]);
    const done = lines.find((line) => line.event === "checkpoint.done")?.fields;
    expect(done).toMatchObject({ sessionId: "session-1", bytes: 1_300, entries: 250 });
    expect(await counted("checkpoint")).toBe(250);
    expect(await counted("restore")).toBe(0);
  });

  it("leaves entries out for a driver that reports bytes only, and ignores counts that are not counts", async () => {
    const { lines, onProgress, context, counted } = harness();
    const reports = [
      { bytes: 2_048 },
      { bytes: 4_096, entries: -1 },
      { bytes: 4_096, entries: 1.5 },
    ];
    const workspace = instrumentPort("workspace", reportingWorkspace(onProgress, reports), context);
    await workspace.checkpoint({ scope });
    const logged = lines.filter((line) => line.event.startsWith("checkpoint."));
    expect(logged.map((line) => line.event)).toEqual([
      "checkpoint.transfer",
      "checkpoint.transfer",
      "checkpoint.done",
    ]);
    for (const line of logged) expect(line.fields).not.toHaveProperty("entries");
    expect(await counted("checkpoint")).toBe(0);
  });
});
