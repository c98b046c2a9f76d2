import { describeRowProvenance } from "../catalog/row-provenance.js";
import type { ConformanceReport } from "./run-conformance.js";

/**
 * The report as a text table with the columns capability, claimed, verified and result, one row per
 * case, followed by the message of every failure. The heading names the contract revision the driver
 * implements and where the catalog row it is compared with comes from; the tail names the runtimes the
 * cases left running, which the runner reaped or could not reap.
 */
export function formatConformanceReport(report: ConformanceReport): string {
  const header = ["case", "capability", "claimed", "verified", "result"];
  const rows = report.cases.map((entry) => [
    entry.id,
    entry.capability,
    entry.claimed ? "yes" : "no",
    entry.verified,
    entry.result === "fail" ? "FAIL" : entry.result,
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd();
  const failures = report.cases.filter((entry) => entry.result === "fail");
  const counts = ["pass", "fail", "not-run"]
    .map((result) => `${report.cases.filter((entry) => entry.result === result).length} ${result}`)
    .join(", ");
  return [
    `${report.name}: ${report.provider} ${report.version} (${report.placement}), contract specification ${report.specificationVersion}`,
    `catalog row: ${report.catalogRow ? `${report.catalogRow.id}, ${describeRowProvenance(report.catalogRow.provenance)}` : "none (the catalog.row case is not claimed)"}`,
    "",
    line(header),
    line(widths.map((width) => "-".repeat(width))),
    ...rows.map(line),
    "",
    `${report.passed ? "PASSED" : "FAILED"}: ${counts}`,
    ...failures.map(
      (entry) =>
        `\n${entry.id}: ${entry.error?.name ?? "Error"}${entry.error?.code ? ` (${entry.error.code})` : ""}: ${entry.error?.message ?? ""}`,
    ),
    ...leftoverLines(report.leftoverRuntimes),
  ].join("\n");
}

function leftoverLines({ reaped, failed }: ConformanceReport["leftoverRuntimes"]): string[] {
  const lines =
    reaped > 0
      ? [
          `\n${reaped} runtime${reaped === 1 ? "" : "s"} left running by the cases, reaped after the run`,
        ]
      : [];
  return [
    ...lines,
    ...failed.map(
      (entry) => `\nruntime ${entry.runtimeId} left running and not reaped: ${entry.error}`,
    ),
  ];
}
