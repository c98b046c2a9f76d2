import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CONFORMANCE_CASES, type ConformanceCaseId } from "../src/cases/case-catalog.js";
import {
  type ConformanceReport,
  runManagedRuntimeConformance,
} from "../src/runner/run-conformance.js";
import {
  type ReferenceDriverOptions,
  createReferenceManagedRuntimeDriver,
} from "../src/testing/index.js";

// Both branches of every capability case must pass against an honest driver: the minimal variant claims
// as little as possible (fail-closed branches), the full variant claims everything the reference can do.
const rootDir = mkdtempSync(join(tmpdir(), "openma-conformance-variants-"));
afterAll(() => rmSync(rootDir, { recursive: true, force: true }));

// Core cases already run against the default reference driver in reference-suite.test.ts; here only the
// cases whose branch depends on the variant's claims run, plus the one core case that changes with them.
const CLAIM_DEPENDENT = CONFORMANCE_CASES.filter((entry) => entry.tier === "capability").map(
  (entry) => entry.id,
);

async function runVariant(
  name: string,
  options: ReferenceDriverOptions,
  cases: readonly ConformanceCaseId[],
): Promise<ConformanceReport> {
  const driver = createReferenceManagedRuntimeDriver({
    rootDir: mkdtempSync(join(rootDir, `${name}-`)),
    ...options,
  });
  return runManagedRuntimeConformance({ name, driver, cases });
}

const failures = (report: ConformanceReport) =>
  report.cases
    .filter((entry) => entry.result === "fail")
    .map((entry) => `${entry.id}: ${entry.error?.message}`);
const verifiedAs = (report: ConformanceReport, verified: string) =>
  report.cases.filter((entry) => entry.verified === verified).map((entry) => entry.id);

describe("reference driver variants", () => {
  it("a minimal driver passes by failing closed on every capability it does not claim", async () => {
    const report = await runVariant(
      "minimal",
      { suspend: false, outputs: false, supervised: false },
      [...CLAIM_DEPENDENT, "credentials.token-redaction"],
    );
    expect(failures(report)).toEqual([]);
    expect(verifiedAs(report, "fail-closed")).toEqual([
      "catalog.row",
      "admission.credential-egress",
      "admission.runtime-checkpoint",
      "admission.supervised-lane",
      "lifecycle.suspend",
      "processes.bytes-io",
      "processes.duplex-stdin",
      "persistence.outputs",
      "persistence.memory-stores",
    ]);
  });

  it("a driver with egress, runtime checkpoints and memory stores passes their claimed branches", async () => {
    const report = await runVariant(
      "full",
      { simulateEnforcedEgress: true, runtimeCheckpoint: true, memoryStores: true },
      CLAIM_DEPENDENT,
    );
    expect(failures(report)).toEqual([]);
    expect(verifiedAs(report, "fail-closed")).toEqual(["catalog.row"]);
    expect(verifiedAs(report, "behaviour")).toEqual(
      CLAIM_DEPENDENT.filter((id) => id !== "catalog.row"),
    );
  });

  it("the reference driver claimed under a catalog id is compared with that row", async () => {
    const report = await runManagedRuntimeConformance({
      name: "bridge-shaped",
      driver: createReferenceManagedRuntimeDriver({
        rootDir: mkdtempSync(join(rootDir, "bridge-")),
        provider: "cloudflare-bridge",
        suspend: false,
        supervised: false,
        memoryStores: true,
      }),
      cases: ["catalog.row"],
    });
    expect(report.cases.find((entry) => entry.id === "catalog.row")).toMatchObject({
      claimed: true,
      verified: "behaviour",
      result: "pass",
    });
  });
});
