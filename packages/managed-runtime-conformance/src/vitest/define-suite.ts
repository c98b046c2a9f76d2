import { afterAll, beforeAll, describe, it } from "vitest";
import { CONFORMANCE_CASES } from "../cases/case-catalog.js";
import { type ConformanceSubject, loadConformanceSubject } from "../cases/subject.js";
import { executeConformanceCase } from "../runner/run-conformance.js";
import { type StartedRuntimes, trackStartedRuntimes } from "../runner/started-runtimes.js";
import {
  type ManagedRuntimeConformanceOptions,
  resolveConformanceOptions,
} from "../runner/suite-options.js";

/**
 * Registers the conformance suite as vitest cases: one `it` per catalog case, run through the real
 * registry and host. A capability the descriptor does not claim still runs, asserting its typed
 * fail-closed error. Cases left out with `cases` are registered as skipped, so they show in the report.
 * Options are validated here, at definition time; the driver is loaded once in `beforeAll`, and `afterAll`
 * reaps every runtime the cases left running (a driver whose terminate threw).
 */
export function defineManagedRuntimeConformanceSuite<TFactoryOptions = unknown>(
  options: ManagedRuntimeConformanceOptions<TFactoryOptions>,
): void {
  const resolved = resolveConformanceOptions(options);
  describe(`managed-runtime conformance: ${resolved.name}`, () => {
    let subject: ConformanceSubject | undefined;
    let started: StartedRuntimes | undefined;
    beforeAll(async () => {
      const loaded = await loadConformanceSubject(resolved);
      started = trackStartedRuntimes(loaded.driver);
      subject = { ...loaded, driver: started.driver };
    }, resolved.timeouts.caseMs);
    afterAll(async () => {
      const leftover = await started?.reapAll({ ms: resolved.timeouts.caseMs });
      if (leftover && leftover.failed.length > 0) {
        const names = leftover.failed
          .map((entry) => `${entry.runtimeId} (${entry.error})`)
          .join(", ");
        throw new Error(`runtimes left running and not reaped: ${names}`);
      }
    }, resolved.timeouts.caseMs * 2);
    for (const entry of CONFORMANCE_CASES) {
      const title = `${entry.id}: ${entry.title}`;
      if (!resolved.cases.includes(entry.id)) {
        it.skip(title, () => undefined);
        continue;
      }
      it(
        title,
        async () => {
          if (!subject)
            throw new Error("the driver under test did not load; see the beforeAll failure");
          await executeConformanceCase(subject, entry.id);
        },
        // The case enforces its own deadline; vitest's is a backstop above it.
        resolved.timeouts.caseMs + 5_000,
      );
    }
  });
}
