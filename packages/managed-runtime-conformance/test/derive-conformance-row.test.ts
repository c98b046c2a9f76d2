import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ManagedRuntimeProviderDriverPort,
  type ManagedRuntimeProviderResources,
  ManagedRuntimeError,
} from "@open-managed-agents/runtime-resource-contract";
import { afterAll, describe, expect, it } from "vitest";
import {
  deriveConformanceRow,
  diffConformanceRows,
  getManagedRuntimeProviderConformance,
} from "../src/index.js";
import {
  type ReferenceDriverOptions,
  createReferenceManagedRuntimeDriver,
} from "../src/testing/index.js";

const rootDir = mkdtempSync(join(tmpdir(), "openma-conformance-derive-"));
afterAll(() => rmSync(rootDir, { recursive: true, force: true }));
const noFacts = { available: [], unavailable: [] } as const;

async function portsOf(
  driver: ManagedRuntimeProviderDriverPort,
): Promise<ManagedRuntimeProviderResources> {
  return driver.create({
    environmentId: "derive",
    placement: "in_process",
    profile: {
      workspace: { requirement: "ephemeral" },
      outputs: { requirement: "disabled" },
      runtimeCheckpoint: "disabled",
      driver: { type: "ama_worker", process: { command: "sh" } },
    },
    plan: {
      workspaceStrategy: "checkpoint_restore",
      outputStrategy: null,
      runtimeCheckpoint: null,
      driver: "ama_worker",
    },
    providerConfig: {},
  });
}

function reference(options: ReferenceDriverOptions = {}) {
  return createReferenceManagedRuntimeDriver({ rootDir, ...options });
}

async function driftField(
  descriptorChange: Parameters<typeof deriveConformanceRow>[0]["descriptor"],
  resources: ManagedRuntimeProviderResources,
) {
  try {
    await deriveConformanceRow({
      descriptor: descriptorChange,
      resources,
      sandboxPortFacts: noFacts,
    });
  } catch (error) {
    return ManagedRuntimeError.hasCode(error, "capability_drift")
      ? error.context.field
      : `unexpected ${String(error)}`;
  }
  return "no drift";
}

describe("deriveConformanceRow", () => {
  it("derives the reference driver's row from its descriptor and live ports", async () => {
    const driver = reference();
    const row = await deriveConformanceRow({
      descriptor: driver.descriptor(),
      resources: await portsOf(driver),
      sandboxPortFacts: { available: ["duplex_process"], unavailable: ["sandbox_fork"] },
    });
    expect(row).toEqual({
      id: "conformance-reference",
      managedRuntime: true,
      status: "managed-runtime",
      driverLanes: ["ama_worker", "openma_supervised"],
      lifecycle: {
        lease: "host-fenced",
        suspendResume: "supported",
        hardTerminate: "supported",
        orphanReap: "host-managed",
      },
      workspace: { strategies: ["checkpoint_restore", "retained_runtime"], durability: "durable" },
      outputs: { strategies: ["final_collect"], durability: "durable" },
      runtimeCheckpoints: [],
      sandboxPortFacts: { available: ["duplex_process"], unavailable: ["sandbox_fork"] },
      provenance: { source: "derived" },
    });
  });

  it("derives a catalog row exactly when the driver matches it", async () => {
    const expected = getManagedRuntimeProviderConformance("cloudflare-bridge");
    const honest = reference({
      provider: "cloudflare-bridge",
      suspend: false,
      supervised: false,
      memoryStores: true,
    });
    const derived = await deriveConformanceRow({
      descriptor: honest.descriptor(),
      resources: await portsOf(honest),
      sandboxPortFacts: expected.sandboxPortFacts,
    });
    expect(diffConformanceRows(expected, derived)).toEqual([]);
    const outputless = reference({
      provider: "cloudflare-bridge",
      suspend: false,
      supervised: false,
      outputs: false,
      memoryStores: true,
    });
    const other = await deriveConformanceRow({
      descriptor: outputless.descriptor(),
      resources: await portsOf(outputless),
      sandboxPortFacts: expected.sandboxPortFacts,
    });
    expect(diffConformanceRows(expected, other)).toEqual([
      "outputs.strategies",
      "outputs.durability",
    ]);
  });

  it("throws capability_drift naming the field the live ports disagree on", async () => {
    const driver = reference({ supervised: false });
    const resources = await portsOf(driver);
    const descriptor = driver.descriptor();
    const withCapabilities = (change: Partial<typeof descriptor.capabilities>) => ({
      ...descriptor,
      capabilities: { ...descriptor.capabilities, ...change },
    });
    expect(
      await driftField(
        withCapabilities({ harness: { drivers: ["ama_worker", "openma_supervised"] } }),
        resources,
      ),
    ).toBe("harness.drivers");
    expect(
      await driftField(
        withCapabilities({ workspace: { strategies: ["durable_mount"] } }),
        resources,
      ),
    ).toBe("workspace.strategies");
    expect(
      await driftField(
        withCapabilities({
          outputs: { strategies: [{ strategy: "final_collect", durability: "best_effort" }] },
        }),
        resources,
      ),
    ).toBe("outputs.strategies");
    expect(
      await driftField(
        {
          ...descriptor,
          credentialEgress: {
            enforcement: "enforced",
            credentialMode: "live",
            interceptedProtocols: ["https"],
          },
        },
        resources,
      ),
    ).toBe("credentialEgress.enforcement");
    const claimingCheckpoints = {
      ...resources,
      sandbox: {
        ...resources.sandbox,
        capabilities: async () => ({
          suspendResume: "supported" as const,
          hardTerminate: "supported" as const,
          runtimeCheckpoints: ["filesystem" as const],
        }),
      },
    };
    expect(
      await driftField(
        withCapabilities({
          sandbox: {
            suspendResume: "supported",
            hardTerminate: "supported",
            runtimeCheckpoints: ["filesystem"],
          },
        }),
        claimingCheckpoints,
      ),
    ).toBe("runtimeCheckpoint port");
  });

  it("rejects facts listed as both available and unavailable", async () => {
    const driver = reference();
    await expect(
      deriveConformanceRow({
        descriptor: driver.descriptor(),
        resources: await portsOf(driver),
        sandboxPortFacts: { available: ["provider_lease"], unavailable: ["provider_lease"] },
      }),
    ).rejects.toMatchObject({ code: "invalid_request" });
  });

  it("compares rows as sets and ignores the reason", () => {
    const row = getManagedRuntimeProviderConformance("cloudflare");
    const reordered = {
      ...row,
      driverLanes: [...row.driverLanes].reverse(),
      reason: "different prose",
    };
    expect(diffConformanceRows(row, reordered)).toEqual([]);
    expect(
      diffConformanceRows(row, {
        ...row,
        lifecycle: { ...row.lifecycle, hardTerminate: "provider-specific" },
      }),
    ).toEqual(["lifecycle.hardTerminate"]);
  });
});
