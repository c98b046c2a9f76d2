import type { ManagedRuntimeProviderConformance } from "./conformance-row.js";

/**
 * The catalog as a text table for people: provider, lanes, workspace and outputs, and where each row comes
 * from. `derived` rows name the driver package in this repository whose tests check them; `declared` rows
 * come from the provider's documentation and are marked unverified.
 */
export function formatConformanceCatalog(
  rows: readonly ManagedRuntimeProviderConformance[],
): string {
  const header = ["provider", "lanes", "workspace", "outputs", "row source"];
  const cells = rows.map((row) => [
    row.id,
    row.driverLanes.join(","),
    row.workspace.strategies.join(",") || "-",
    row.outputs.strategies.join(",") || "-",
    row.provenance.source === "derived"
      ? `derived from ${row.provenance.driverPackage ?? "a driver"}, checked by its tests`
      : `declared from provider documentation, UNVERIFIED${row.provenance.documentation ? ` (${row.provenance.documentation})` : ""}`,
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...cells.map((line) => (line[column] ?? "").length)),
  );
  const line = (values: readonly string[]) =>
    values
      .map((value, column) => value.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd();
  const derived = rows.filter((row) => row.provenance.source === "derived").length;
  return [
    line(header),
    line(widths.map((width) => "-".repeat(width))),
    ...cells.map(line),
    "",
    `${derived} derived and checked against a driver in this repository, ${rows.length - derived} declared and unverified`,
  ].join("\n");
}
