import {
  IntegrityError,
  type RuntimeResourcePublication,
  parseRuntimeResourcePublication,
} from "@open-managed-agents/runtime-resource-contract";

/** The publication columns of a `runtime_resource_fences` row. */
export interface PublicationRow {
  readonly published_generation: number;
  readonly revision: number;
  /** JSON of the candidates and runtime checkpoint; NULL before the first publish. */
  readonly publication: string | null;
}

/** Rebuilds the session's publication from its row, parsing the stored JSON with the contract schema. */
export function readPublication(row: PublicationRow): RuntimeResourcePublication | null {
  if (row.publication === null) return null;
  let body: unknown;
  try {
    body = JSON.parse(row.publication);
  } catch (error) {
    throw new IntegrityError({
      message: "stored publication is not valid JSON",
      context: { record: "publication" },
      cause: error,
    });
  }
  const fields = typeof body === "object" && body !== null ? body : {};
  return parseRuntimeResourcePublication(
    { ...fields, generation: row.published_generation, revision: row.revision },
    { code: "integrity_failed" },
  );
}
