import {
  CapabilityUnsupportedError,
  InvalidConfigError,
} from "@open-managed-agents/runtime-resource-contract";
import type {
  CostAttributionCapabilities,
  CostAttributionPort,
  CostReport,
  CostReportQuery,
} from "./ports.js";

/** Dispatches cost reports by provider id. */
export interface CostAttributionRegistry {
  /** Registered provider ids, sorted. */
  providers(): readonly string[];
  /** Throws `capability_unsupported` for a provider with no registered port. */
  capabilities(provider: string): Promise<CostAttributionCapabilities>;
  /** Throws `capability_unsupported` for a provider with no registered port. */
  report(provider: string, query: CostReportQuery): Promise<CostReport>;
}

/** Creates the registry; two ports for one provider id are `invalid_config`. */
export function createCostAttributionRegistry(options: {
  readonly ports: readonly CostAttributionPort[];
}): CostAttributionRegistry {
  const ports = new Map<string, CostAttributionPort>();
  for (const port of options.ports) {
    if (
      typeof port?.provider !== "string" ||
      typeof port.report !== "function" ||
      typeof port.capabilities !== "function"
    ) {
      throw new InvalidConfigError({
        message:
          "invalid cost attribution registry options at ports: each must be a CostAttributionPort",
      });
    }
    if (ports.has(port.provider)) {
      throw new InvalidConfigError({
        message: `two cost attribution ports for provider ${port.provider}`,
        context: { provider: port.provider },
      });
    }
    ports.set(port.provider, port);
  }
  const portFor = (provider: string): CostAttributionPort => {
    const port = ports.get(provider);
    if (!port) {
      throw new CapabilityUnsupportedError({
        message: `no cost attribution is registered for provider ${provider}`,
        context: { provider, providers: [...ports.keys()].sort() },
      });
    }
    return port;
  };
  return {
    providers: () => [...ports.keys()].sort(),
    capabilities: (provider) => portFor(provider).capabilities(),
    report: (provider, query) => portFor(provider).report(query),
  };
}
