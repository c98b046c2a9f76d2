import { InvalidConfigError } from "@open-managed-agents/runtime-resource-contract";
import Big from "big.js";
import type {
  CostAttributionCapabilities,
  CostAttributionPort,
  FocusCostRow,
  UsageLedgerTotal,
} from "../ports.js";
import { parseLedgerTotals } from "../ledger-totals.js";
import { nextDay, reportWindow } from "../query.js";
import {
  type CloudflareCostAttributionOptions,
  type ResolvedCloudflareCostOptions,
  resolveCloudflareCostOptions,
} from "./options.js";
import type { CloudflareInstanceSize } from "./pricing.js";

/** One priced component of a container's running time. */
interface Component {
  readonly sku: string;
  readonly unit: string;
  readonly size: (size: CloudflareInstanceSize) => string;
  readonly rate: (options: ResolvedCloudflareCostOptions) => string;
  readonly describe: (instanceType: string, size: CloudflareInstanceSize) => string;
}

const COMPONENTS: readonly Component[] = [
  {
    sku: "containers-memory",
    unit: "GiB-Seconds",
    size: (size) => size.memoryGiB,
    rate: (options) => options.rates.memoryGiBSecond,
    describe: (type, size) =>
      `Cloudflare Containers memory, ${type} (${size.memoryGiB} GiB provisioned)`,
  },
  {
    sku: "containers-disk",
    unit: "GB-Seconds",
    size: (size) => size.diskGB,
    rate: (options) => options.rates.diskGBSecond,
    describe: (type, size) => `Cloudflare Containers disk, ${type} (${size.diskGB} GB provisioned)`,
  },
  {
    sku: "containers-cpu",
    unit: "vCPU-Seconds",
    size: (size) => size.vcpu,
    rate: (options) => options.rates.vcpuSecond,
    describe: (type, size) =>
      `Cloudflare Containers CPU, ${type} (${size.vcpu} vCPU over active seconds: an upper bound of active use)`,
  },
];

const CAPABILITIES = {
  usageKinds: ["sandbox_active_seconds"],
  components: COMPONENTS.map((component) => component.sku),
  granularity: "daily",
  cpu: "provisioned_upper_bound",
  excludes: ["egress", "workers-requests", "durable-objects", "r2-storage"],
} as const;

/**
 * Prices `sandbox_active_seconds` from the usage ledger at Cloudflare Containers rates: memory and disk on
 * the instance type's provisioned size, CPU as provisioned vCPU over the active seconds (the ledger does
 * not measure CPU use, so this is an upper bound). One FOCUS row per UTC day, tenant, environment,
 * session, instance type and component; all arithmetic is exact decimal.
 */
export function createCloudflareCostAttribution(
  options: CloudflareCostAttributionOptions,
): CostAttributionPort {
  const settings = resolveCloudflareCostOptions(options);
  const capabilities: CostAttributionCapabilities = {
    provider: settings.provider,
    ...CAPABILITIES,
  };
  return {
    provider: settings.provider,
    capabilities: async () => capabilities,
    async report(query) {
      const window = reportWindow(query);
      const read = await settings.ledger.totals({
        kind: "sandbox_active_seconds",
        provider: settings.provider,
        fromInclusive: window.fromInclusive,
        toExclusive: window.toExclusive,
      });
      const totals = parseLedgerTotals(read);
      const rows = [...totals].sort(compareTotals).flatMap((total) => priceTotal(settings, total));
      const sum = rows.reduce((acc, row) => acc.plus(row.BilledCost), new Big(0));
      return {
        provider: settings.provider,
        from: window.from,
        to: window.to,
        currency: "USD",
        rows,
        total: sum.toFixed(),
      };
    },
  };
}

function priceTotal(
  settings: ResolvedCloudflareCostOptions,
  total: UsageLedgerTotal,
): FocusCostRow[] {
  const instanceType = total.instanceType ?? settings.defaultInstanceType;
  const size = instanceType === null ? undefined : settings.instanceTypes[instanceType];
  if (instanceType === null || size === undefined) {
    throw new InvalidConfigError({
      message:
        instanceType === null
          ? "usage rows name no instance type and no defaultInstanceType is configured"
          : `instance type ${instanceType} has no configured size`,
      context: { instanceType, day: total.day },
    });
  }
  const seconds = new Big(total.seconds);
  return COMPONENTS.map((component) => {
    const quantity = seconds.times(component.size(size));
    const rate = component.rate(settings);
    const cost = quantity.times(rate).toFixed();
    return {
      BillingCurrency: "USD",
      BilledCost: cost,
      EffectiveCost: cost,
      ListCost: cost,
      ListUnitPrice: new Big(rate).toFixed(),
      PricingQuantity: quantity.toFixed(),
      PricingUnit: component.unit,
      ConsumedQuantity: quantity.toFixed(),
      ConsumedUnit: component.unit,
      ChargePeriodStart: `${total.day}T00:00:00.000Z`,
      ChargePeriodEnd: nextDay(total.day),
      ChargeCategory: "Usage",
      ChargeDescription: component.describe(instanceType, size),
      ProviderName: "Cloudflare",
      ServiceName: "Cloudflare Containers",
      SkuId: component.sku,
      ResourceType: instanceType,
      Tags: {
        tenant: total.workspaceId,
        environment: total.environmentId,
        session: total.sessionId,
      },
    };
  });
}

// Code-unit order, not locale order: the same ledger gives the same report everywhere.
function compareTotals(a: UsageLedgerTotal, b: UsageLedgerTotal): number {
  const key = (total: UsageLedgerTotal) =>
    [
      total.day,
      total.workspaceId,
      total.environmentId,
      total.sessionId,
      total.instanceType ?? "",
    ].join("\u0000");
  const left = key(a);
  const right = key(b);
  return left < right ? -1 : left > right ? 1 : 0;
}
