import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CONFORMANCE_CASE_IDS } from "../src/cases/case-catalog.js";
import { runManagedRuntimeConformance } from "../src/runner/run-conformance.js";
import { BROKEN_DRIVERS } from "./fixtures/broken-drivers.js";

// Every case must be able to fail: each broken driver changes one behaviour of the reference driver,
// and the cases it breaks must fail against it, for the stated reason.
const rootDir = mkdtempSync(join(tmpdir(), "openma-conformance-broken-"));
afterAll(() => rmSync(rootDir, { recursive: true, force: true }));

describe("broken drivers", () => {
  it("break every case of the catalog", () => {
    const broken = new Set(
      BROKEN_DRIVERS.flatMap((fixture) => fixture.breaks.map((target) => target.id)),
    );
    expect(CONFORMANCE_CASE_IDS.filter((id) => !broken.has(id))).toEqual([]);
  });

  for (const fixture of BROKEN_DRIVERS) {
    for (const target of fixture.breaks) {
      it(`${fixture.name} fails ${target.id} (${fixture.defect})`, async () => {
        const report = await runManagedRuntimeConformance({
          name: fixture.name,
          driver: fixture.driver(mkdtempSync(join(rootDir, `${fixture.name}-`))),
          cases: [target.id],
          ...(fixture.secrets ? { secrets: fixture.secrets } : {}),
        });
        const outcome = report.cases.find((entry) => entry.id === target.id);
        expect(outcome?.result).toBe("fail");
        expect(outcome?.error?.message).toMatch(target.because);
        expect(report.passed).toBe(false);
      });
    }
  }
});
