import { CapabilityUnsupportedError, InvalidConfigError, InvalidRequestError, NotFoundError, parseRecord } from "@open-managed-agents/runtime-resource-contract";
import { type ManagedRuntimeProviderConformance, managedRuntimeProviderConformanceSchema } from "./conformance-row.js";
import { PROVIDER_ROWS } from "./provider-rows.js";

/** Id of a provider that has a row in {@link MANAGED_RUNTIME_PROVIDER_CONFORMANCE}. */
export type ManagedRuntimeProviderId = (typeof PROVIDER_ROWS)[number]["id"];

/**
 * Validates a catalog: every row parses and no id repeats. Throws `invalid_config` naming the row.
 * Runs once when this module loads, so a malformed row fails every import instead of a lookup.
 */
export function validateConformanceCatalog(rows: readonly unknown[]): readonly ManagedRuntimeProviderConformance[] {
  const seen = new Set<string>();
  return rows.map((candidate, index) => {
    const parsed = parseRecord(managedRuntimeProviderConformanceSchema, candidate, { record: `conformance row ${index}`, code: "invalid_config" });
    if (seen.has(parsed.id)) {
      throw new InvalidConfigError({ message: `conformance catalog repeats provider ${parsed.id}`, context: { provider: parsed.id } });
    }
    seen.add(parsed.id);
    return parsed;
  });
}

validateConformanceCatalog(PROVIDER_ROWS);

/** The provider conformance catalog: one validated, frozen row per in-tree managed preset. */
export const MANAGED_RUNTIME_PROVIDER_CONFORMANCE: typeof PROVIDER_ROWS = deepFreeze(PROVIDER_ROWS);

/** Every catalog id, in catalog order. */
export const MANAGED_RUNTIME_PROVIDER_IDS: readonly ManagedRuntimeProviderId[] = Object.freeze(MANAGED_RUNTIME_PROVIDER_CONFORMANCE.map((row) => row.id));

/** True when `id` names a catalog row. */
export function isManagedRuntimeProviderId(id: unknown): id is ManagedRuntimeProviderId {
  return typeof id === "string" && (MANAGED_RUNTIME_PROVIDER_IDS as readonly string[]).includes(id);
}

/**
 * The catalog row of `id`. Throws `invalid_request` for a non-string or empty id and `not_found` for an
 * id without a row; the error context lists the known ids.
 */
export function getManagedRuntimeProviderConformance(id: string): ManagedRuntimeProviderConformance {
  const provider = requireProviderString(id);
  const found = MANAGED_RUNTIME_PROVIDER_CONFORMANCE.find((row) => row.id === provider);
  if (!found) {
    throw new NotFoundError({
      message: `no conformance row for provider ${provider}; known providers: ${MANAGED_RUNTIME_PROVIDER_IDS.join(", ")}`,
      context: { provider, known: [...MANAGED_RUNTIME_PROVIDER_IDS] },
    });
  }
  return found;
}

/**
 * Narrows `id` to a catalog provider that is a managed runtime. Throws `not_found` for an unknown id and
 * `capability_unsupported` for a row that only implements the tool-sandbox port.
 */
export function requireManagedRuntimeProvider(id: string): ManagedRuntimeProviderId {
  const row = getManagedRuntimeProviderConformance(id);
  if (!row.managedRuntime || row.status !== "managed-runtime") {
    throw new CapabilityUnsupportedError({
      message: `provider ${row.id} implements only the tool-sandbox port, not a managed runtime`,
      context: { provider: row.id, status: row.status },
    });
  }
  return row.id as ManagedRuntimeProviderId;
}

function requireProviderString(id: unknown): string {
  if (typeof id !== "string" || id.trim() === "") {
    throw new InvalidRequestError({ message: "provider id must be a non-empty string", context: { received: typeof id } });
  }
  return id;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
