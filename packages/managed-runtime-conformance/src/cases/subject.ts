import {
  assertSpecificationVersion,
  loadManagedRuntimeProviderDriver,
} from "@open-managed-agents/managed-runtime-host";
import {
  CapabilityUnsupportedError,
  InvalidConfigError,
  type ManagedRuntimeProviderDriverDescriptor,
  type ManagedRuntimeProviderDriverPort,
  type ManagedRuntimeProviderPlacement,
  parseManagedRuntimeProviderDriverDescriptor,
} from "@open-managed-agents/runtime-resource-contract";
import type { ManagedRuntimeProviderConformance } from "../catalog/conformance-row.js";
import {
  isManagedRuntimeProviderId,
  getManagedRuntimeProviderConformance,
} from "../catalog/provider-conformance.js";
import type { ResolvedConformanceOptions } from "../runner/suite-options.js";

/** The driver under test and everything the cases need to know about it. */
export interface ConformanceSubject {
  readonly name: string;
  readonly driver: ManagedRuntimeProviderDriverPort;
  /** The descriptor, parsed once when the driver was loaded. */
  readonly descriptor: ManagedRuntimeProviderDriverDescriptor;
  readonly placement: ManagedRuntimeProviderPlacement;
  readonly providerConfig: Readonly<Record<string, unknown>>;
  readonly harness: ResolvedConformanceOptions["harness"];
  readonly timeouts: ResolvedConformanceOptions["timeouts"];
  /** Strings that must appear in no record or log field. */
  readonly secrets: readonly string[];
  /** The catalog row of the provider, or the deployer's expected row; null when neither exists. */
  readonly expectedRow: ManagedRuntimeProviderConformance | null;
}

/**
 * Loads the driver (through the real loader when `loadDriver` is set), parses its descriptor and picks the
 * placement. Throws `invalid_config` for a descriptor of another contract revision (naming both) or one
 * that does not parse, and `capability_unsupported` for a placement the descriptor does not list.
 */
export async function loadConformanceSubject(
  options: ResolvedConformanceOptions,
): Promise<ConformanceSubject> {
  const driver = await loadDriver(options);
  const raw = driver.descriptor();
  assertSpecificationVersion(raw, { driver: options.name, code: "invalid_config" });
  const descriptor = parseManagedRuntimeProviderDriverDescriptor(raw, { code: "invalid_config" });
  const placement = options.placement ?? descriptor.placements[0];
  if (placement === undefined || !descriptor.placements.includes(placement)) {
    throw new CapabilityUnsupportedError({
      message: `${descriptor.provider} does not list placement ${placement ?? "(none)"}; it lists ${descriptor.placements.join(", ")}`,
      context: { provider: descriptor.provider, placement: placement ?? null },
    });
  }
  const expectedRow =
    options.expectedRow ??
    (isManagedRuntimeProviderId(descriptor.provider)
      ? getManagedRuntimeProviderConformance(descriptor.provider)
      : null);
  return {
    name: options.name,
    driver,
    descriptor,
    placement,
    providerConfig: options.providerConfig,
    harness: options.harness,
    timeouts: options.timeouts,
    secrets: options.secrets,
    expectedRow,
  };
}

async function loadDriver(
  options: ResolvedConformanceOptions,
): Promise<ManagedRuntimeProviderDriverPort> {
  if (options.loadDriver) {
    return loadManagedRuntimeProviderDriver({
      provider: options.loadDriver.provider,
      moduleSpecifier: options.loadDriver.moduleSpecifier,
      factoryOptions: options.factoryOptions,
      ...(options.loadDriver.importModule ? { importModule: options.loadDriver.importModule } : {}),
    });
  }
  const candidate = options.driver;
  const driver =
    typeof candidate === "function" ? await candidate(options.factoryOptions) : candidate;
  if (!driver || typeof driver.descriptor !== "function" || typeof driver.create !== "function") {
    throw new InvalidConfigError({
      message: "the driver factory did not return a driver with descriptor() and create()",
      context: { field: "driver" },
    });
  }
  return driver;
}
