import * as z from "zod";

/** A JSON scalar: the only values allowed in lease, candidate and handle metadata. */
export type JsonScalar = string | number | boolean | null;

/**
 * Flat metadata whose values are JSON scalars. It is persisted and crosses process boundaries, so
 * it must never hold SDK handles, tokens or secrets.
 */
export type ScalarMetadata = Readonly<Record<string, JsonScalar>>;

/** Schema for {@link ScalarMetadata}; rejects nested objects, arrays, functions and non-finite numbers. */
export const scalarMetadataSchema = z.record(
  z.string(),
  z.union([
    z.string(),
    z.number().refine(Number.isFinite, "must be a finite number"),
    z.boolean(),
    z.null(),
  ]),
);

/** A non-empty string. */
export const nonEmptyString = z.string().min(1, "must not be empty");

/** An ISO-8601 timestamp string. */
export const isoTimestamp = z.iso.datetime({ offset: true });
