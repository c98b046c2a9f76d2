import {
  ManagedRuntimeError,
  type UsageRecord,
} from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { createCloudflareCostAttribution } from "../src/cloudflare/index.js";
import { createCostAttributionRegistry, createMemoryUsageLedger } from "../src/index.js";

function record(overrides: Partial<UsageRecord> & { readonly stoppedAt: string }): UsageRecord {
  return {
    kind: "sandbox_active_seconds",
    value: 3600,
    provider: "cloudflare",
    runtimeId: `oma-${Math.random().toString(16).slice(2)}`,
    scope: {
      workspaceId: "tenant-a",
      environmentId: "env-1",
      sessionId: "ses-1",
      workId: "work-1",
    },
    instanceType: "standard-1",
    startedAt: "2026-11-01T00:00:00.000Z",
    ...overrides,
  };
}

describe("Cloudflare cost attribution", () => {
  it("prices an hour of standard-1 at the published rates, exactly", async () => {
    const ledger = createMemoryUsageLedger();
    await ledger.record(record({ stoppedAt: "2026-11-01T01:00:00.000Z" }));
    const report = await createCloudflareCostAttribution({ ledger }).report({
      from: "2026-11-01",
      to: "2026-11-01",
    });
    // standard-1: 4 GiB, 8 GB, 1/2 vCPU. 3600 s × 4 GiB × $0.0000025 = $0.036; × 8 GB × $0.00000007 = $0.002016; × 0.5 vCPU × $0.00002 = $0.036.
    expect(
      report.rows.map((row) => [
        row.SkuId,
        row.PricingQuantity,
        row.PricingUnit,
        row.ListUnitPrice,
        row.BilledCost,
      ]),
    ).toEqual([
      ["containers-memory", "14400", "GiB-Seconds", "0.0000025", "0.036"],
      ["containers-disk", "28800", "GB-Seconds", "0.00000007", "0.002016"],
      ["containers-cpu", "1800", "vCPU-Seconds", "0.00002", "0.036"],
    ]);
    expect(report.total).toBe("0.074016");
    expect(report.rows[0]).toMatchObject({
      BillingCurrency: "USD",
      ChargeCategory: "Usage",
      ChargePeriodStart: "2026-11-01T00:00:00.000Z",
      ChargePeriodEnd: "2026-11-02T00:00:00.000Z",
      ProviderName: "Cloudflare",
      ServiceName: "Cloudflare Containers",
      ResourceType: "standard-1",
      Tags: { tenant: "tenant-a", environment: "env-1", session: "ses-1" },
    });
  });

  it("sums thousands of tiny charges without float drift", async () => {
    const ledger = createMemoryUsageLedger();
    for (let index = 0; index < 1000; index += 1) {
      await ledger.record(
        record({
          value: 1,
          instanceType: "lite",
          stoppedAt: "2026-11-02T10:00:00.000Z",
          scope: { workspaceId: "t", environmentId: "e", sessionId: `s-${index}`, workId: "w" },
        }),
      );
    }
    const report = await createCloudflareCostAttribution({ ledger }).report({
      from: "2026-11-02",
      to: "2026-11-02",
    });
    // lite, 1 s: 0.25 GiB × 0.0000025 + 2 GB × 0.00000007 + 0.0625 vCPU × 0.00002 = $0.000002015; 1000 of them = $0.002015.
    expect(report.rows).toHaveLength(3000);
    expect(report.total).toBe("0.002015");
    const floatSum = report.rows.reduce((sum, row) => sum + Number(row.BilledCost), 0);
    expect(String(floatSum)).not.toBe("0.002015");
  });

  it("covers an inclusive UTC day range, one row set per day and attribution, and prices configured sizes", async () => {
    const ledger = createMemoryUsageLedger();
    const custom = { custom: { vcpu: "3", memoryGiB: "9", diskGB: "10" } };
    await ledger.record(
      record({ value: 10, instanceType: null, stoppedAt: "2026-10-31T23:59:59.999Z" }),
    );
    await ledger.record(
      record({ value: 10, instanceType: null, stoppedAt: "2026-11-01T00:00:00.000Z" }),
    );
    await ledger.record(
      record({ value: 20, instanceType: null, stoppedAt: "2026-11-01T12:00:00.000Z" }),
    );
    await ledger.record(
      record({ value: 5, instanceType: null, stoppedAt: "2026-11-03T23:59:59.999Z" }),
    );
    await ledger.record(
      record({ value: 7, instanceType: null, stoppedAt: "2026-11-04T00:00:00.000Z" }),
    );
    await ledger.record(
      record({
        value: 99,
        provider: "cloudflare-bridge",
        instanceType: null,
        stoppedAt: "2026-11-02T00:00:00.000Z",
      }),
    );
    const port = createCloudflareCostAttribution({
      ledger,
      instanceTypes: custom,
      defaultInstanceType: "custom",
    });
    const report = await port.report({ from: "2026-11-01", to: "2026-11-03" });
    const days = report.rows
      .filter((row) => row.SkuId === "containers-cpu")
      .map((row) => [row.ChargePeriodStart.slice(0, 10), row.PricingQuantity]);
    expect(days).toEqual([
      ["2026-11-01", "90"],
      ["2026-11-03", "15"],
    ]);
    // 35 s × (9 × 0.0000025 + 10 × 0.00000007 + 3 × 0.00002) = 35 × 0.0000832 = 0.002912
    expect(report.total).toBe("0.002912");
  });

  it("refuses bad ranges and unknown instance types with typed errors", async () => {
    const ledger = createMemoryUsageLedger();
    const port = createCloudflareCostAttribution({ ledger });
    for (const query of [
      { from: "2026-11-03", to: "2026-11-01" },
      { from: "2026-11-01", to: "2027-12-01" },
      { from: "11/01/2026", to: "2026-11-02" },
      { from: "2026-02-30", to: "2026-03-01" },
    ]) {
      const error = await port.report(query).catch((caught: unknown) => caught);
      expect(ManagedRuntimeError.hasCode(error, "invalid_request"), JSON.stringify(query)).toBe(
        true,
      );
    }
    await ledger.record(
      record({ instanceType: "gpu-9000", stoppedAt: "2026-11-01T05:00:00.000Z" }),
    );
    const error = await port
      .report({ from: "2026-11-01", to: "2026-11-01" })
      .catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(error, "invalid_config")).toBe(true);
    expect((error as ManagedRuntimeError).context).toMatchObject({ instanceType: "gpu-9000" });
    expect(() => createCloudflareCostAttribution({ ledger, defaultInstanceType: "nope" })).toThrow(
      expect.objectContaining({ code: "invalid_config" }),
    );
    expect(() =>
      createCloudflareCostAttribution({
        ledger,
        instanceTypes: { x: { vcpu: "0", memoryGiB: "1", diskGB: "1" } },
      }),
    ).toThrow(expect.objectContaining({ code: "invalid_config" }));
  });

  it("refuses a ledger answer that is not whole seconds", async () => {
    const ledger = {
      totals: async () => [
        {
          day: "2026-11-01",
          workspaceId: "t",
          environmentId: "e",
          sessionId: "s",
          instanceType: "lite",
          seconds: 1.5,
        },
      ],
    };
    const error = await createCloudflareCostAttribution({ ledger })
      .report({ from: "2026-11-01", to: "2026-11-01" })
      .catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(error, "internal")).toBe(true);
  });
});

describe("cost attribution registry", () => {
  it("dispatches by provider id and fails closed for an unregistered one", async () => {
    const registry = createCostAttributionRegistry({
      ports: [createCloudflareCostAttribution({ ledger: createMemoryUsageLedger() })],
    });
    expect(registry.providers()).toEqual(["cloudflare"]);
    expect(await registry.capabilities("cloudflare")).toMatchObject({
      provider: "cloudflare",
      usageKinds: ["sandbox_active_seconds"],
      cpu: "provisioned_upper_bound",
    });
    expect(
      await registry.report("cloudflare", { from: "2026-11-01", to: "2026-11-01" }),
    ).toMatchObject({ rows: [], total: "0" });
    const calls: (() => Promise<unknown>)[] = [
      () => registry.report("vercel", { from: "2026-11-01", to: "2026-11-01" }),
      () => registry.capabilities("vercel"),
    ];
    for (const call of calls) {
      const error = await Promise.resolve()
        .then(call)
        .catch((caught: unknown) => caught);
      expect(ManagedRuntimeError.hasCode(error, "capability_unsupported")).toBe(true);
    }
    const port = createCloudflareCostAttribution({ ledger: createMemoryUsageLedger() });
    expect(() => createCostAttributionRegistry({ ports: [port, port] })).toThrow(
      expect.objectContaining({ code: "invalid_config" }),
    );
  });
});
