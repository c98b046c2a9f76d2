import type { BlobStore } from "@open-managed-agents/blob-store";
import {
  ManagedRuntimeError,
  type ManagedRuntimeProfile,
  type RuntimeEnvironment,
} from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import {
  type CloudflareCredentialVault,
  createCloudflareManagedRuntimeDriver,
} from "../src/index.js";
import { unreachableSandbox } from "./fake-sandbox.js";
import { r2BindingShape } from "./r2-binding.js";

const runtimeEnvironment: RuntimeEnvironment = {
  kind: "base",
  artifact: { type: "image", reference: "docker.io/cloudflare/sandbox:0.12.10" },
};
const vault: CloudflareCredentialVault = {
  open: async () => undefined,
  resolve: async () => ({ type: "deny" }),
  revoke: async () => undefined,
};
const store = {
  put: async () => null,
  get: async () => null,
  head: async () => null,
  delete: async () => undefined,
  list: async () => ({ objects: [], truncated: false }),
} as unknown as BlobStore;
const profile: ManagedRuntimeProfile = {
  workspace: { requirement: "durable" },
  outputs: { requirement: "disabled" },
  runtimeCheckpoint: "disabled",
  driver: { type: "ama_worker", process: { command: "sh" } },
};
const plan = {
  workspaceStrategy: "checkpoint_restore",
  outputStrategy: null,
  runtimeCheckpoint: null,
  driver: "ama_worker",
} as const;
const mountEnv = {
  WORKSPACE_BUCKET: r2BindingShape(),
  WORKSPACE_BUCKET_NAME: "oma-workspaces",
  R2_ENDPOINT: "https://account.r2.cloudflarestorage.com",
  R2_ACCESS_KEY_ID: "id",
  R2_SECRET_ACCESS_KEY: "secret",
};

describe("descriptor", () => {
  it("claims only what the configured ports deliver", () => {
    const minimal = createCloudflareManagedRuntimeDriver(
      {},
      { createSandbox: unreachableSandbox, runtimeEnvironment },
    ).descriptor();
    expect(minimal).toEqual({
      specificationVersion: "v1",
      provider: "cloudflare",
      version: "0.1.0",
      placements: ["in_process"],
      capabilities: {
        sandbox: {
          suspendResume: "unsupported",
          hardTerminate: "supported",
          runtimeCheckpoints: [],
        },
        workspace: { strategies: ["checkpoint_restore"] },
        outputs: { strategies: [] },
        harness: { drivers: ["ama_worker", "openma_supervised"] },
      },
      credentialEgress: {
        enforcement: "unsupported",
        credentialMode: "snapshot",
        interceptedProtocols: [],
      },
    });
  });

  it("adds final_collect with an output store (explicit or FILES_BUCKET), durable_mount with the mount, enforced egress with a vault", () => {
    const full = createCloudflareManagedRuntimeDriver(mountEnv, {
      createSandbox: unreachableSandbox,
      runtimeEnvironment,
      outputs: { store },
      workspaceDurableMount: true,
      credentialVault: vault,
    }).descriptor();
    expect(full.capabilities.workspace.strategies).toEqual(["durable_mount", "checkpoint_restore"]);
    expect(full.capabilities.outputs.strategies).toEqual([
      { strategy: "final_collect", durability: "durable" },
    ]);
    expect(full.credentialEgress).toEqual({
      enforcement: "enforced",
      credentialMode: "live",
      interceptedProtocols: ["http", "https"],
    });
    const filesBucket = createCloudflareManagedRuntimeDriver(
      { FILES_BUCKET: r2BindingShape() },
      { createSandbox: unreachableSandbox, runtimeEnvironment },
    ).descriptor();
    expect(filesBucket.capabilities.outputs.strategies).toEqual([
      { strategy: "final_collect", durability: "durable" },
    ]);
  });

  it("claims mount memory stores only with memoryStoreMount, and create returns the port of that mode", async () => {
    expect(
      createCloudflareManagedRuntimeDriver(
        {},
        { createSandbox: unreachableSandbox, runtimeEnvironment },
      ).descriptor().memoryStores,
    ).toBeUndefined();
    const memoryEnv = {
      ...mountEnv,
      MEMORY_BUCKET: r2BindingShape(),
      MEMORY_BUCKET_NAME: "oma-memory",
    };
    const driver = createCloudflareManagedRuntimeDriver(memoryEnv, {
      createSandbox: unreachableSandbox,
      runtimeEnvironment,
      memoryStoreMount: true,
    });
    expect(driver.descriptor().memoryStores).toBe("mount");
    const resources = await driver.create({
      environmentId: "e",
      placement: "in_process",
      profile,
      plan,
      providerConfig: {},
    });
    expect(resources.memoryStores?.mode).toBe("mount");
  });

  it("the live ports agree with the descriptor, and create refuses other placements", async () => {
    const driver = createCloudflareManagedRuntimeDriver(mountEnv, {
      createSandbox: unreachableSandbox,
      runtimeEnvironment,
      outputs: { store },
      workspaceDurableMount: true,
      credentialVault: vault,
    });
    const scope = { workspaceId: "w", environmentId: "e", sessionId: "s", workId: "k" };
    const resources = await driver.create({
      environmentId: "e",
      placement: "in_process",
      profile,
      plan,
      providerConfig: {},
    });
    expect(await resources.workspace.capabilities(scope)).toEqual(
      driver.descriptor().capabilities.workspace,
    );
    expect(await resources.outputs.capabilities(scope)).toEqual(
      driver.descriptor().capabilities.outputs,
    );
    expect(await resources.sandbox.capabilities(scope)).toEqual(
      driver.descriptor().capabilities.sandbox,
    );
    expect(resources.supervisorTransport).toBeDefined();
    expect(await resources.credentialEgress?.capabilities(scope)).toEqual(
      driver.descriptor().credentialEgress,
    );
    for (const placement of ["driver_service", "provider_native"] as const) {
      const error = await driver
        .create({ environmentId: "e", placement, profile, plan, providerConfig: {} })
        .catch((caught: unknown) => caught);
      expect(ManagedRuntimeError.hasCode(error, "capability_unsupported")).toBe(true);
    }
  });

  it("without a vault there is no egress port, so a required-egress profile cannot be admitted", async () => {
    const driver = createCloudflareManagedRuntimeDriver(
      {},
      { createSandbox: unreachableSandbox, runtimeEnvironment },
    );
    const resources = await driver.create({
      environmentId: "e",
      placement: "in_process",
      profile,
      plan,
      providerConfig: {},
    });
    expect(resources.credentialEgress).toBeUndefined();
  });
});
