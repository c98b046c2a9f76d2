import * as z from "zod";

/**
 * Where a catalog row comes from. A `derived` row is what `deriveConformanceRow` computes from a driver in
 * this repository, whose own test asserts that the derived row equals the catalog row, so the row is checked
 * on every test run. A `declared` row is written from the provider's documentation: no driver in this
 * repository runs against the provider, so nothing verifies it.
 */
export type ConformanceRowProvenance =
  | {
      readonly source: "derived";
      /**
       * The workspace package of the driver; its tests derive the row and compare it with the catalog.
       * Every catalog row names one; a row derived during a suite run without a package name does not.
       */
      readonly driverPackage?: string;
    }
  | {
      readonly source: "declared";
      /** The provider documentation the row was written from, when there is a public page to name. */
      readonly documentation?: string;
    };

/** Schema of a {@link ConformanceRowProvenance}. */
export const conformanceRowProvenanceSchema = z.discriminatedUnion("source", [
  z
    .object({
      source: z.literal("derived"),
      driverPackage: z.string().min(1, "must not be empty").optional(),
    })
    .strict(),
  z
    .object({
      source: z.literal("declared"),
      documentation: z.url({ protocol: /^https$/ }).optional(),
    })
    .strict(),
]);

/** One line for people: how far a row can be trusted. */
export function describeRowProvenance(provenance: ConformanceRowProvenance): string {
  return provenance.source === "derived"
    ? `derived from the driver ${provenance.driverPackage ?? "under test"} in this repository and checked equal to it by its tests`
    : `declared from the provider's documentation${provenance.documentation ? ` (${provenance.documentation})` : ""}; unverified, no driver in this repository`;
}
