import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import {
  cloudflareBridgeOptionsFromEnv,
  createCloudflareBridgeManagedRuntime,
  createManagedRuntimeProviderDriver,
} from "../src/index.js";

const store = createMemoryBlobStore();
const valid = {
  baseUrl: "https://bridge.example.com",
  apiKey: "secret-api-key-123",
  checkpointStore: store,
};

function configError(run: () => unknown): ManagedRuntimeError {
  try {
    run();
  } catch (error) {
    if (ManagedRuntimeError.hasCode(error, "invalid_config")) {
      expect(error.message).not.toContain("secret-api-key-123");
      return error;
    }
    throw error;
  }
  throw new Error("expected invalid_config");
}

describe("cloudflare-bridge options", () => {
  it("accepts valid options and advertises exactly the seed's capability column", () => {
    const descriptor = createCloudflareBridgeManagedRuntime({
      ...valid,
      outputStore: store,
    }).descriptor();
    expect(descriptor).toMatchObject({
      provider: "cloudflare-bridge",
      placements: ["driver_service"],
      capabilities: {
        sandbox: { suspendResume: "unsupported", runtimeCheckpoints: [] },
        workspace: { strategies: ["checkpoint_restore"] },
        outputs: { strategies: [{ strategy: "final_collect", durability: "durable" }] },
        harness: { drivers: ["ama_worker"] },
      },
      credentialEgress: {
        enforcement: "unsupported",
        credentialMode: "snapshot",
        interceptedProtocols: [],
      },
    });
  });

  it("advertises no output strategy without an output store", () => {
    expect(
      createCloudflareBridgeManagedRuntime(valid).descriptor().capabilities.outputs.strategies,
    ).toEqual([]);
  });

  it.each([
    ["checkpointKeyPrefix", { checkpointKeyPrefix: "a//b" }],
    ["checkpointKeyPrefix", { checkpointKeyPrefix: "a/../b" }],
    ["checkpointKeyPrefix", { checkpointKeyPrefix: "./a" }],
    ["outputKeyPrefix", { outputKeyPrefix: "/abs" }],
    ["maxHydrateBytes", { maxHydrateBytes: 0 }],
    ["maxHydrateBytes", { maxHydrateBytes: 2 ** 60 }],
    ["maxHydrateBytes", { maxHydrateBytes: 1.5 }],
    ["baseUrl", { baseUrl: "not a url" }],
    ["baseUrl", { baseUrl: "ftp://bridge.example.com" }],
    ["apiKey", { apiKey: "" }],
    ["checkpointStore", { checkpointStore: {} }],
    ["partBytes", { partBytes: 64 * 1024 * 1024 }],
    ["archiveLimits", { archiveLimits: { maxEntries: 0 } }],
    ["archiveLimits", { archiveLimits: { maxEntryBytes: -1 } }],
    ["archiveLimits", { archiveLimits: { maxFiles: 10 } }],
    ["checkContainerRuntime", { checkContainerRuntime: "http://127.0.0.1:1/api/ping" }],
  ])("rejects a bad %s with invalid_config naming it", (field, override) => {
    const error = configError(() =>
      createCloudflareBridgeManagedRuntime({ ...valid, ...(override as object) } as never),
    );
    expect(error.message).toContain(field);
  });

  it("rejects unknown options", () => {
    expect(
      configError(() => createCloudflareBridgeManagedRuntime({ ...valid, apiKeyy: "x" } as never))
        .code,
    ).toBe("invalid_config");
  });

  it("says a baseUrl of another scheme must be http(s)", () => {
    for (const baseUrl of ["ftp://x", "not a url"]) {
      expect(
        configError(() => createCloudflareBridgeManagedRuntime({ ...valid, baseUrl })).message,
      ).toBe("invalid cloudflare-bridge options at baseUrl: must be an absolute http(s) URL");
    }
  });

  it("names a misspelt key as unknown, not the required key it leaves missing", () => {
    const { checkpointStore, ...rest } = valid;
    const error = configError(() =>
      createCloudflareBridgeManagedRuntime({ ...rest, checkpointStor: checkpointStore } as never),
    );
    expect(error.message).toBe(
      'invalid cloudflare-bridge options at (root): unknown key "checkpointStor"',
    );
  });

  it("maps the deployment environment and names every missing variable", () => {
    const error = configError(() => cloudflareBridgeOptionsFromEnv({}));
    expect(error.context.missing).toEqual([
      "OMA_CLOUDFLARE_BRIDGE_URL",
      "OMA_CLOUDFLARE_BRIDGE_API_KEY",
      "OMA_CLOUDFLARE_R2_BUCKET",
    ]);
    const r2Error = configError(() =>
      cloudflareBridgeOptionsFromEnv({
        OMA_CLOUDFLARE_BRIDGE_URL: "https://b.example.com",
        OMA_CLOUDFLARE_BRIDGE_API_KEY: "k",
        OMA_CLOUDFLARE_R2_BUCKET: "bucket",
      }),
    );
    expect(r2Error.message).toMatch(/R2_/);
    const options = cloudflareBridgeOptionsFromEnv(
      {
        OMA_CLOUDFLARE_BRIDGE_URL: "https://b.example.com",
        OMA_CLOUDFLARE_BRIDGE_API_KEY: "k",
        OMA_CLOUDFLARE_BRIDGE_RUNTIME_ID: "prod-eu",
      },
      { checkpointStore: store },
    );
    expect(options).toMatchObject({
      baseUrl: "https://b.example.com",
      checkpointKeyPrefix: "cloudflare-bridge-workspaces/prod-eu",
      outputKeyPrefix: "cloudflare-bridge-output-candidates/prod-eu",
    });
  });

  it("builds the driver from the loader entry with env or explicit options", () => {
    const fromEnv = createManagedRuntimeProviderDriver({
      env: {
        OMA_CLOUDFLARE_BRIDGE_URL: "https://b.example.com",
        OMA_CLOUDFLARE_BRIDGE_API_KEY: "k",
      },
      checkpointStore: store,
    });
    expect(fromEnv.descriptor().provider).toBe("cloudflare-bridge");
    expect(createManagedRuntimeProviderDriver(valid).descriptor().provider).toBe(
      "cloudflare-bridge",
    );
  });
});
