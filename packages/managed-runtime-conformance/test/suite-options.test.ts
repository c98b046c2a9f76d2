import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import {
  type ManagedRuntimeConformanceOptions,
  loadConformanceSubject,
  resolveConformanceOptions,
} from "../src/index.js";
import { createManagedRuntimeProviderDriver } from "../src/testing/index.js";

function refusal(options: unknown): { code: string; path: unknown } | null {
  try {
    resolveConformanceOptions(options as ManagedRuntimeConformanceOptions);
    return null;
  } catch (error) {
    if (!ManagedRuntimeError.isInstance(error)) throw error;
    return { code: error.code, path: error.context.path };
  }
}

describe("conformance suite options", () => {
  it("applies defaults and collects secrets from secret-looking factory options", () => {
    const resolved = resolveConformanceOptions({
      name: "acme",
      driver: createManagedRuntimeProviderDriver,
      factoryOptions: {
        endpoint: "https://acme.invalid",
        apiKey: "acme-key-123456",
        nested: { clientSecret: "acme-secret-654321" },
      },
      secrets: ["extra-secret-000"],
    });
    expect(resolved.harness).toEqual({
      shell: "sh",
      missingCommand: "openma-conformance-missing-harness",
      env: {},
    });
    expect(resolved.timeouts).toEqual({
      caseMs: 60_000,
      heartbeatIntervalMs: 1_000,
      leaseTtlMs: 30_000,
    });
    expect(resolved.secrets).toEqual(["extra-secret-000", "acme-key-123456", "acme-secret-654321"]);
    expect(resolved.cases).toHaveLength(24);
  });

  it("refuses bad options with invalid_config naming the field", () => {
    expect(refusal({ name: "x" })).toEqual({ code: "invalid_config", path: "driver" });
    expect(
      refusal({
        name: "x",
        driver: createManagedRuntimeProviderDriver,
        loadDriver: { provider: "p", moduleSpecifier: "m" },
      }),
    ).toEqual({
      code: "invalid_config",
      path: "driver",
    });
    expect(refusal({ name: "", driver: createManagedRuntimeProviderDriver })).toEqual({
      code: "invalid_config",
      path: "name",
    });
    expect(refusal({ name: "x", driver: {} })).toEqual({ code: "invalid_config", path: "driver" });
    expect(
      refusal({
        name: "x",
        driver: createManagedRuntimeProviderDriver,
        cases: ["lifecycle.teleport"],
      }),
    ).toEqual({ code: "invalid_config", path: "cases.0" });
    expect(
      refusal({
        name: "x",
        driver: createManagedRuntimeProviderDriver,
        placement: "external_worker",
      }),
    ).toEqual({ code: "invalid_config", path: "placement" });
    expect(
      refusal({
        name: "x",
        driver: createManagedRuntimeProviderDriver,
        timeouts: { heartbeatIntervalMs: 60_000 },
      }),
    ).toEqual({
      code: "invalid_config",
      path: "timeouts.heartbeatIntervalMs",
    });
    expect(
      refusal({
        name: "x",
        driver: createManagedRuntimeProviderDriver,
        harness: { shell: "sh", typo: true },
      }),
    ).toMatchObject({ code: "invalid_config" });
  });

  it("refuses a placement the descriptor does not list when the driver loads", async () => {
    const rootDir = mkdtempSync(join(tmpdir(), "openma-conformance-options-"));
    try {
      const resolved = resolveConformanceOptions({
        name: "x",
        driver: createManagedRuntimeProviderDriver,
        factoryOptions: { rootDir },
        placement: "provider_native",
      });
      await expect(loadConformanceSubject(resolved)).rejects.toMatchObject({
        code: "capability_unsupported",
      });
    } finally {
      rmSync(rootDir, { recursive: true, force: true });
    }
  });
});
