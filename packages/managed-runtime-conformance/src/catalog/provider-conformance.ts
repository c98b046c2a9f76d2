import {
  CapabilityUnsupportedError,
  InvalidConfigError,
  InvalidRequestError,
  NotFoundError,
  parseRecord,
} from "@open-managed-agents/runtime-resource-contract";
import {
  type ManagedRuntimeProviderConformance,
  managedRuntimeProviderConformanceSchema,
} from "./conformance-row.js";
import { PROVIDER_ROWS } from "./provider-rows.js";

/** Id of a provider that has a row in {@link MANAGED_RUNTIME_PROVIDER_CONFORMANCE}. */
export type ManagedRuntimeProviderId = (typeof PROVIDER_ROWS)[number]["id"];

/** Lookups over one validated catalog. */
export interface ConformanceCatalog<Id extends string = string> {
  readonly rows: readonly ManagedRuntimeProviderConformance[];
  readonly ids: readonly Id[];
  /** True when `id` names a row. */
  has(id: unknown): id is Id;
  /** The row of `id`; `invalid_request` for a non-string or empty id, `not_found` for an id without a row. */
  get(id: string): ManagedRuntimeProviderConformance;
  /** `id` narrowed to a managed-runtime row; `capability_unsupported` for a tool-sandbox-only row. */
  require(id: string): Id;
}

/**
 * Validates `rows` (every row parses, a derived row names its driver package, no id repeats; `invalid_config`
 * naming the row otherwise) and returns lookups over a frozen copy.
 */
export function createConformanceCatalog<Id extends string = string>(
  rows: readonly unknown[],
): ConformanceCatalog<Id> {
  const seen = new Set<string>();
  const validated = rows.map((candidate, index) => {
    const parsed = parseRecord(managedRuntimeProviderConformanceSchema, candidate, {
      record: `conformance row ${index}`,
      code: "invalid_config",
    });
    if (parsed.provenance.source === "derived" && parsed.provenance.driverPackage === undefined) {
      throw new InvalidConfigError({
        message: `conformance row ${parsed.id} is derived but names no driver package`,
        context: { provider: parsed.id, path: `${index}.provenance.driverPackage` },
      });
    }
    if (seen.has(parsed.id)) {
      throw new InvalidConfigError({
        message: `conformance catalog repeats provider ${parsed.id}`,
        context: { provider: parsed.id },
      });
    }
    seen.add(parsed.id);
    return deepFreeze(parsed);
  });
  const ids = Object.freeze(validated.map((row) => row.id)) as readonly Id[];
  const has = (id: unknown): id is Id =>
    typeof id === "string" && (ids as readonly string[]).includes(id);
  const get = (id: string): ManagedRuntimeProviderConformance => {
    if (typeof id !== "string" || id.trim() === "") {
      throw new InvalidRequestError({
        message: "provider id must be a non-empty string",
        context: { received: typeof id },
      });
    }
    const found = validated.find((row) => row.id === id);
    if (!found) {
      throw new NotFoundError({
        message: `no conformance row for provider ${id}; known providers: ${ids.join(", ")}`,
        context: { provider: id, known: [...ids] },
      });
    }
    return found;
  };
  return {
    rows: Object.freeze(validated),
    ids,
    has,
    get,
    require(id) {
      const row = get(id);
      if (!row.managedRuntime || row.status !== "managed-runtime") {
        throw new CapabilityUnsupportedError({
          message: `provider ${row.id} implements only the tool-sandbox port, not a managed runtime`,
          context: { provider: row.id, status: row.status },
        });
      }
      return row.id as Id;
    },
  };
}

const catalog = createConformanceCatalog<ManagedRuntimeProviderId>(PROVIDER_ROWS);

/**
 * The provider conformance catalog: one validated, frozen row per in-tree managed preset. It is validated
 * when this module loads, so a malformed row fails every import rather than one lookup.
 */
export const MANAGED_RUNTIME_PROVIDER_CONFORMANCE: readonly ManagedRuntimeProviderConformance[] =
  catalog.rows;

/** Every catalog id, in catalog order. */
export const MANAGED_RUNTIME_PROVIDER_IDS: readonly ManagedRuntimeProviderId[] = catalog.ids;

/** True when `id` names a catalog row. */
export const isManagedRuntimeProviderId = (id: unknown): id is ManagedRuntimeProviderId =>
  catalog.has(id);

/** The catalog row of `id`. Throws `invalid_request` for a non-string or empty id and `not_found` (listing the known ids) for an unknown one. */
export const getManagedRuntimeProviderConformance = (
  id: string,
): ManagedRuntimeProviderConformance => catalog.get(id);

/**
 * Narrows `id` to a catalog provider that is a managed runtime. Throws `not_found` for an unknown id and
 * `capability_unsupported` for a row that only implements the tool-sandbox port.
 */
export const requireManagedRuntimeProvider = (id: string): ManagedRuntimeProviderId =>
  catalog.require(id);

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
