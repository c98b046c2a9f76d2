import type { UsageKind } from "@open-managed-agents/runtime-resource-contract";

/** An inclusive range of UTC calendar days, `YYYY-MM-DD`. */
export interface CostReportQuery {
  readonly from: string;
  readonly to: string;
}

/**
 * One row of a cost report, with FOCUS column names. Money and quantities are exact decimal strings, so
 * summing rows never drifts; `Tags` attributes the cost to a tenant, environment and session.
 */
export interface FocusCostRow {
  readonly BillingCurrency: "USD";
  /** Cost in `BillingCurrency`: `PricingQuantity × ListUnitPrice`, exact. */
  readonly BilledCost: string;
  /** Equal to `BilledCost`: list prices, no discounts or commitments known here. */
  readonly EffectiveCost: string;
  readonly ListCost: string;
  readonly ListUnitPrice: string;
  readonly PricingQuantity: string;
  readonly PricingUnit: string;
  readonly ConsumedQuantity: string;
  readonly ConsumedUnit: string;
  /** Start of the UTC day, ISO 8601. */
  readonly ChargePeriodStart: string;
  /** Start of the next UTC day (exclusive). */
  readonly ChargePeriodEnd: string;
  readonly ChargeCategory: "Usage";
  readonly ChargeDescription: string;
  readonly ProviderName: string;
  readonly ServiceName: string;
  /** The priced component, e.g. `containers-memory`. */
  readonly SkuId: string;
  /** The instance type the usage ran on. */
  readonly ResourceType: string;
  readonly Tags: {
    readonly tenant: string;
    readonly environment: string;
    readonly session: string;
  };
}

/** A report over a query. */
export interface CostReport {
  readonly provider: string;
  readonly from: string;
  readonly to: string;
  readonly currency: "USD";
  readonly rows: readonly FocusCostRow[];
  /** Sum of `BilledCost`, exact. */
  readonly total: string;
}

/** What a cost-attribution port can price. */
export interface CostAttributionCapabilities {
  readonly provider: string;
  /** Usage kinds it reads from the ledger. */
  readonly usageKinds: readonly UsageKind[];
  /** Components it prices, as `SkuId`s. */
  readonly components: readonly string[];
  /** Smallest charge period of its rows. */
  readonly granularity: "daily";
  /** How CPU is priced: `provisioned_upper_bound` when active CPU use is not measured and provisioned vCPU over active seconds stands for it. */
  readonly cpu: "provisioned_upper_bound" | "measured" | "not_priced";
  /** Costs not in the report (egress, Workers requests, Durable Objects), named so nobody mistakes the total for the invoice. */
  readonly excludes: readonly string[];
}

/** Prices a provider's usage. Implementations keep provider credentials, if any, to themselves. */
export interface CostAttributionPort {
  /** The provider id it prices; the registry dispatches on it. */
  readonly provider: string;
  capabilities(): Promise<CostAttributionCapabilities>;
  /**
   * Prices the usage recorded in the inclusive UTC day range. Throws `invalid_request` for a malformed
   * or reversed range, `invalid_config` when a usage row names an instance type with no configured size.
   */
  report(query: CostReportQuery): Promise<CostReport>;
}

/** Usage summed per UTC day and attribution, as a ledger returns it. */
export interface UsageLedgerTotal {
  /** `YYYY-MM-DD` (UTC) of the records' `stoppedAt`. */
  readonly day: string;
  readonly workspaceId: string;
  readonly environmentId: string;
  readonly sessionId: string;
  readonly instanceType: string | null;
  /** Sum of the records' values (whole seconds). */
  readonly seconds: number;
}

/** Reads the usage ledger the drivers' usage recorder writes. */
export interface UsageLedgerReader {
  /**
   * Totals of `kind` for `provider` over records whose `stoppedAt` is in `[fromInclusive, toExclusive)`
   * (ISO 8601 instants), grouped by UTC day, workspace, environment, session and instance type.
   */
  totals(input: {
    readonly kind: UsageKind;
    readonly provider: string;
    readonly fromInclusive: string;
    readonly toExclusive: string;
  }): Promise<readonly UsageLedgerTotal[]>;
}
