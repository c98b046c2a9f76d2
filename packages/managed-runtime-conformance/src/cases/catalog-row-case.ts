import { deriveConformanceRow, diffConformanceRows } from "../catalog/derive-conformance-row.js";
import { requireManagedRuntimeProvider } from "../catalog/provider-conformance.js";
import { check, expectSuccess, expectTypedError } from "./assertions.js";
import type { ConformanceCaseImplementation } from "./case-definition.js";

/** `catalog.row`: a provider with a row must derive exactly that row from its descriptor and live ports. */
export const catalogRowCase: ConformanceCaseImplementation = {
  claimed: (subject) => subject.expectedRow !== null,
  async verify(context) {
    const expected = context.subject.expectedRow;
    check(expected, "no expected conformance row");
    const { resources } = await expectSuccess(
      () => context.prepare(context.profile("noop")),
      "admitting the baseline profile",
    );
    const derived = await expectSuccess(
      () =>
        deriveConformanceRow({
          descriptor: context.subject.descriptor,
          resources,
          sandboxPortFacts: expected.sandboxPortFacts,
        }),
      "deriving the conformance row",
    );
    const differences = diffConformanceRows(expected, derived);
    check(
      differences.length === 0,
      `the derived row differs from the conformance row ${expected.id} at ${differences.join(", ")}`,
    );
  },
  async refuse(context) {
    await expectTypedError(
      async () => requireManagedRuntimeProvider(context.subject.descriptor.provider),
      ["not_found"],
      `requiring ${context.subject.descriptor.provider} as a catalog managed runtime`,
    );
  },
};
