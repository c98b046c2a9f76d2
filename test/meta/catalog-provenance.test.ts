import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { MANAGED_RUNTIME_PROVIDER_CONFORMANCE } from "@open-managed-agents/managed-runtime-conformance";
import { describe, expect, it } from "vitest";
import { discoverMembers, listFiles, repoPath } from "./workspace.js";

// A catalog row says where it comes from. A `derived` row must name a driver package of this repository
// whose tests derive the row from the driver and compare it with the catalog; a `declared` row must not
// belong to a provider that has a driver here (that row would be checkable, so it must be derived).
const members = await discoverMembers();
const sourcesOf = async (dir: string, accept: (name: string) => boolean) =>
  Promise.all(
    (await listFiles(dir, accept)).map(async (file) => ({
      file,
      text: await readFile(file, "utf8"),
    })),
  );
const isTest = (name: string) => /\.test\.ts$/.test(name);
const isSource = (name: string) => /\.ts$/.test(name) && !/\.test(-d)?\.ts$/.test(name);

describe.each(
  MANAGED_RUNTIME_PROVIDER_CONFORMANCE.filter((row) => row.provenance.source === "derived").map(
    (row) => [row.id, row] as const,
  ),
)("derived row %s", (id, row) => {
  const driverPackage =
    row.provenance.source === "derived" ? row.provenance.driverPackage : undefined;
  const member = members.find((candidate) => candidate.name === driverPackage);

  it("names a driver package of this repository", () => {
    expect(member, `${driverPackage ?? "(no package)"} is a workspace package`).toBeDefined();
  });

  it("is derived from that driver and compared with the catalog by one of its tests", async () => {
    const tests = await sourcesOf(join(member!.dir, "test"), isTest);
    const checking = tests.filter(
      ({ text }) =>
        text.includes("deriveConformanceRow(") &&
        text.includes("getManagedRuntimeProviderConformance(") &&
        text.includes(`driverPackage: "${driverPackage}"`) &&
        text.includes(".toEqual("),
    );
    expect(
      checking.map(({ file }) => repoPath(file)),
      `a test in ${member!.path} derives the ${id} row and compares it with the catalog`,
    ).not.toEqual([]);
  });
});

it("no declared row belongs to a provider that has a driver in this repository", async () => {
  const declared = MANAGED_RUNTIME_PROVIDER_CONFORMANCE.filter(
    (row) => row.provenance.source === "declared",
  ).map((row) => row.id);
  const offences: string[] = [];
  for (const member of members) {
    for (const { file, text } of await sourcesOf(join(member.dir, "src"), isSource)) {
      for (const match of text.matchAll(/export const \w+_PROVIDER = "([^"]+)"/g)) {
        if (declared.includes(match[1]!))
          offences.push(
            `${repoPath(file)} defines provider ${match[1]}, whose catalog row is declared`,
          );
      }
    }
  }
  expect(offences, "derive that row from the driver and mark it derived").toEqual([]);
});
