import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import {
  deriveConformanceRow,
  getManagedRuntimeProviderConformance,
} from "@open-managed-agents/managed-runtime-conformance";
import { describe, expect, it } from "vitest";
import {
  CLOUDFLARE_BRIDGE_PROVIDER,
  CLOUDFLARE_BRIDGE_SANDBOX_PORT_FACTS,
  createCloudflareBridgeManagedRuntime,
} from "../src/index.js";
import { shellProfile } from "./support.js";

describe("cloudflare-bridge catalog row", () => {
  it("is derived from the descriptor and live ports and equals the catalog row", async () => {
    const store = createMemoryBlobStore();
    const driver = createCloudflareBridgeManagedRuntime({
      baseUrl: "http://127.0.0.1:9",
      apiKey: "key",
      checkpointStore: store,
      outputStore: store,
    });
    const descriptor = driver.descriptor();
    const resources = await driver.create({
      environmentId: "env",
      placement: "driver_service",
      profile: shellProfile("true"),
      plan: {
        workspaceStrategy: "checkpoint_restore",
        outputStrategy: "final_collect",
        runtimeCheckpoint: null,
        driver: "ama_worker",
      },
      providerConfig: {},
    });
    const catalogRow = getManagedRuntimeProviderConformance(CLOUDFLARE_BRIDGE_PROVIDER);
    const derived = await deriveConformanceRow({
      descriptor,
      resources,
      sandboxPortFacts: CLOUDFLARE_BRIDGE_SANDBOX_PORT_FACTS,
      reason: catalogRow.reason,
      driverPackage: "@open-managed-agents/managed-runtime-cloudflare-bridge",
    });
    expect(derived).toEqual(catalogRow);
    expect(descriptor.provider).toBe(CLOUDFLARE_BRIDGE_PROVIDER);
  });
});
