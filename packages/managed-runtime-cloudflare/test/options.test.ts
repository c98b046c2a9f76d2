import {
  ManagedRuntimeError,
  type RuntimeEnvironment,
} from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import {
  type CloudflareManagedRuntimeOptions,
  DEFAULT_LEASE_TTL_MS,
  MEMORY_MOUNT_ENV_KEYS,
  WORKSPACE_MOUNT_ENV_KEYS,
  createCloudflareManagedRuntimeDriver,
  createManagedRuntimeProviderDriver,
} from "../src/index.js";
import { unreachableSandbox } from "./fake-sandbox.js";
import { r2BindingShape } from "./r2-binding.js";

const runtimeEnvironment: RuntimeEnvironment = {
  kind: "base",
  artifact: { type: "image", reference: "docker.io/cloudflare/sandbox:0.12.10" },
};
const base: CloudflareManagedRuntimeOptions = {
  createSandbox: () => unreachableSandbox(),
  runtimeEnvironment,
};
const SECRET_KEY = "r2-secret-value-that-must-not-leak";
const mountEnv = (): Record<string, unknown> => ({
  WORKSPACE_BUCKET: r2BindingShape(),
  WORKSPACE_BUCKET_NAME: "oma-workspaces",
  R2_ENDPOINT: "https://account.r2.cloudflarestorage.com",
  R2_ACCESS_KEY_ID: "access-key-id-value",
  R2_SECRET_ACCESS_KEY: SECRET_KEY,
});

function configError(build: () => unknown): ManagedRuntimeError {
  let caught: unknown;
  try {
    build();
  } catch (error) {
    caught = error;
  }
  expect(ManagedRuntimeError.hasCode(caught, "invalid_config")).toBe(true);
  return caught as ManagedRuntimeError;
}

describe("option validation at factory time", () => {
  it.each([
    ["createSandbox", { createSandbox: "not a function" }],
    ["runtimeEnvironment", { runtimeEnvironment: undefined }],
    [
      "runtimeEnvironment",
      { runtimeEnvironment: { kind: "base", artifact: { type: "template", templateId: "t" } } },
    ],
    [
      "runtimeEnvironment",
      { runtimeEnvironment: { kind: "other", artifact: { type: "image", reference: "x" } } },
    ],
    ["leaseTtlMs", { leaseTtlMs: 0 }],
    ["leaseTtlMs", { leaseTtlMs: 1.5 }],
    ["controlPlaneBaseUrl", { controlPlaneBaseUrl: "not a url" }],
    ["controlPlaneBaseUrl", { controlPlaneBaseUrl: "ftp://openma.example" }],
    ["controlPlaneBaseUrl", { controlPlaneBaseUrl: "https://user:pass@openma.example" }],
    ["controlPlaneBaseUrl", { controlPlaneBaseUrl: "https://openma.example/?token=x" }],
    ["workspaceDurableMount", { workspaceDurableMount: "yes" }],
    ["credentialVault", { credentialVault: { open: () => undefined } }],
    ["outputs", { outputs: { store: {} } }],
    ["outputs", { outputs: { keyPrefix: "" } }],
    ["readiness", { readiness: { timeoutMs: -1 } }],
    ["backupTtlSec", { backupTtlSec: 0 }],
    ["sessionInputs", { sessionInputs: {} }],
  ])("refuses a bad %s", (field, override) => {
    const error = configError(() =>
      createCloudflareManagedRuntimeDriver({}, {
        ...base,
        ...override,
      } as unknown as CloudflareManagedRuntimeOptions),
    );
    expect(error.message).toContain(field);
  });

  it("never accepts an implicit runtime environment", () => {
    const { runtimeEnvironment: _omitted, ...withoutEnvironment } = base;
    expect(
      configError(() =>
        createCloudflareManagedRuntimeDriver(
          {},
          withoutEnvironment as CloudflareManagedRuntimeOptions,
        ),
      ).message,
    ).toContain("runtimeEnvironment");
  });

  it("accepts a preinstalled artifact and a custom image", () => {
    for (const environment of [
      { kind: "custom", artifact: { type: "image", reference: "registry.example/oma:1" } },
      { kind: "base", artifact: { type: "preinstalled", description: "openma/sandbox-base" } },
    ] as const) {
      expect(
        createCloudflareManagedRuntimeDriver(
          {},
          { ...base, runtimeEnvironment: environment },
        ).descriptor().provider,
      ).toBe("cloudflare");
    }
  });

  it.each(WORKSPACE_MOUNT_ENV_KEYS.map((key) => [key]))(
    "names the missing %s when workspaceDurableMount is on",
    (key) => {
      const env = mountEnv();
      delete env[key];
      const error = configError(() =>
        createCloudflareManagedRuntimeDriver(env, { ...base, workspaceDurableMount: true }),
      );
      expect(error.message).toContain(key);
      expect(error.context.field).toBe(key);
    },
  );

  it.each([
    ["WORKSPACE_BUCKET", "a string, not a binding"],
    ["WORKSPACE_BUCKET_NAME", "Not_A_Bucket"],
    ["R2_ENDPOINT", "https://account.r2.cloudflarestorage.com/path"],
    ["R2_ENDPOINT", "not a url"],
    ["R2_SECRET_ACCESS_KEY", 42],
  ])("refuses a malformed %s without echoing secrets", (key, value) => {
    const error = configError(() =>
      createCloudflareManagedRuntimeDriver(
        { ...mountEnv(), [key]: value },
        { ...base, workspaceDurableMount: true },
      ),
    );
    expect(error.context.field).toBe(key);
    expect(JSON.stringify(error.toJSON())).not.toContain(SECRET_KEY);
  });

  it.each(MEMORY_MOUNT_ENV_KEYS.map((key) => [key]))(
    "names the missing %s when memoryStoreMount is on",
    (key) => {
      const env: Record<string, unknown> = {
        ...mountEnv(),
        MEMORY_BUCKET: r2BindingShape(),
        MEMORY_BUCKET_NAME: "oma-memory",
      };
      delete env[key];
      const error = configError(() =>
        createCloudflareManagedRuntimeDriver(env, { ...base, memoryStoreMount: true }),
      );
      expect(error.message).toContain(key);
      expect(error.context.field).toBe(key);
      expect(JSON.stringify(error.toJSON())).not.toContain(SECRET_KEY);
    },
  );

  it("does not read the mount keys unless the mount is on", () => {
    expect(
      createCloudflareManagedRuntimeDriver({}, base).descriptor().capabilities.workspace.strategies,
    ).toEqual(["checkpoint_restore"]);
  });

  it("the loader entry requires the Worker environment and passes the options through", () => {
    expect(configError(() => createManagedRuntimeProviderDriver({ ...base })).message).toContain(
      "env",
    );
    expect(configError(() => createManagedRuntimeProviderDriver(null)).context.field).toBe("env");
    expect(createManagedRuntimeProviderDriver({ env: {}, ...base }).descriptor().provider).toBe(
      "cloudflare",
    );
    expect(DEFAULT_LEASE_TTL_MS).toBe(90_000);
  });
});

describe("loading by module specifier", () => {
  it("the host's loader finds the driver under the provider id cloudflare", async () => {
    const { loadManagedRuntimeProviderDriver } = await import(
      "@open-managed-agents/managed-runtime-host"
    );
    const driver = await loadManagedRuntimeProviderDriver({
      provider: "cloudflare",
      moduleSpecifier: "@open-managed-agents/managed-runtime-cloudflare",
      factoryOptions: { env: {}, ...base },
      // Resolved from this package (the host does not depend on drivers): its own published entry.
      importModule: (specifier) => import(/* @vite-ignore */ specifier),
    });
    expect(driver.descriptor().provider).toBe("cloudflare");
    const mismatch = await loadManagedRuntimeProviderDriver({
      provider: "cloudflare-bridge",
      moduleSpecifier: "@open-managed-agents/managed-runtime-cloudflare",
      factoryOptions: { env: {}, ...base },
      importModule: (specifier) => import(/* @vite-ignore */ specifier),
    }).catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.isInstance(mismatch)).toBe(true);
  });
});
