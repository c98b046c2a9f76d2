import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { resolveSandboxClass } from "../../src/config/class-resolver.js";
import { customSizeProblem } from "../../src/config/instance-types.js";
import { type SandboxClass, parsePluginConfig } from "../../src/config/plugin-config.js";

const namespace = { idFromName: () => ({}) };
const classes = [
  { binding: "SMALL", image: "img", instanceType: "standard-1" },
  { binding: "LARGE", image: "img", instanceType: "standard-4" },
];
const baseEnv = {
  PLUGIN_TOKEN: "a-token-of-sixteen-chars",
  SANDBOX_CLASSES: classes,
  SANDBOX_REGISTRY: namespace,
  SMALL: namespace,
  LARGE: namespace,
};

function configFailure(env: Record<string, unknown>): ManagedRuntimeError {
  try {
    parsePluginConfig(env);
  } catch (error) {
    if (ManagedRuntimeError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("the configuration was accepted");
}

describe("parsePluginConfig", () => {
  it("applies defaults and accepts SANDBOX_CLASSES as a JSON var or a JSON string", () => {
    const config = parsePluginConfig(baseEnv);
    expect(config).toMatchObject({
      defaultTtlSeconds: 3_600,
      maxTtlSeconds: 86_400,
      instanceStartTimeoutMs: 30_000,
      maxFileBytes: 16 * 1_024 * 1_024,
    });
    expect(
      parsePluginConfig({
        ...baseEnv,
        SANDBOX_CLASSES: JSON.stringify(classes),
        MAX_TTL_SECONDS: "7200",
      }),
    ).toMatchObject({ classes, maxTtlSeconds: 7_200 });
  });

  it("refuses a missing or empty token secret, naming PLUGIN_TOKEN", () => {
    for (const token of [undefined, ""]) {
      const error = configFailure({ ...baseEnv, PLUGIN_TOKEN: token });
      expect(error.code).toBe("invalid_config");
      expect(error.context.field).toBe("PLUGIN_TOKEN");
      expect(error.message).toContain("wrangler secret put PLUGIN_TOKEN");
    }
  });

  it("refuses a short token without echoing it", () => {
    const error = configFailure({ ...baseEnv, PLUGIN_TOKEN: "short-secret" });
    expect(error.context.field).toBe("PLUGIN_TOKEN");
    expect(error.message).not.toContain("short-secret");
  });

  it("names the field of a bad class list, a missing binding and a duplicate", () => {
    expect(configFailure({ ...baseEnv, SANDBOX_CLASSES: "not json" }).context.field).toBe(
      "SANDBOX_CLASSES",
    );
    expect(
      configFailure({
        ...baseEnv,
        SANDBOX_CLASSES: [{ binding: "SMALL", image: "img", instanceType: "huge" }],
      }).context.field,
    ).toBe("SANDBOX_CLASSES.0.instanceType");
    expect(
      configFailure({
        ...baseEnv,
        SANDBOX_CLASSES: [{ binding: "NOPE", image: "img", instanceType: "basic" }],
      }).context.field,
    ).toBe("SANDBOX_CLASSES.0.binding");
    expect(
      configFailure({ ...baseEnv, SANDBOX_CLASSES: [classes[0], classes[0]] }).context.field,
    ).toBe("SANDBOX_CLASSES.1.binding");
    expect(configFailure({ ...baseEnv, SANDBOX_REGISTRY: undefined }).context.field).toBe(
      "SANDBOX_REGISTRY",
    );
    expect(configFailure({ ...baseEnv, DEFAULT_TTL_SECONDS: "90000" }).context.field).toBe(
      "DEFAULT_TTL_SECONDS",
    );
  });
});

describe("instance types", () => {
  it("enforces Cloudflare's custom size rules", () => {
    expect(customSizeProblem({ vcpu: 4, memoryMib: 12_288, diskMb: 20_000 })).toBeUndefined();
    expect(customSizeProblem({ vcpu: 2, memoryMib: 6_144, diskMb: 12_000 })).toBeUndefined();
    expect(customSizeProblem({ vcpu: 0.5, memoryMib: 4_096, diskMb: 4_000 })).toMatch(/vcpu/);
    expect(customSizeProblem({ vcpu: 5, memoryMib: 12_288, diskMb: 8_000 })).toMatch(/vcpu/);
    expect(customSizeProblem({ vcpu: 4, memoryMib: 13_000, diskMb: 8_000 })).toMatch(/12 GiB/);
    expect(customSizeProblem({ vcpu: 4, memoryMib: 12_288, diskMb: 21_000 })).toMatch(/20 GB/);
    expect(customSizeProblem({ vcpu: 2, memoryMib: 4_096, diskMb: 8_000 })).toMatch(/per vCPU/);
    expect(customSizeProblem({ vcpu: 1, memoryMib: 3_072, diskMb: 7_000 })).toMatch(/per GiB/);
  });

  it("resolves an image and size to the exact or the smallest covering class", () => {
    const configured: SandboxClass[] = [
      ...classes,
      {
        binding: "CUSTOM",
        image: "img",
        instanceType: { vcpu: 2, memoryMib: 8_192, diskMb: 12_000 },
      },
    ] as SandboxClass[];
    expect(resolveSandboxClass(configured, "img", "standard-1").binding).toBe("SMALL");
    expect(resolveSandboxClass(configured, "img", "lite").binding).toBe("SMALL");
    expect(resolveSandboxClass(configured, "img", "standard-2").binding).toBe("CUSTOM");
    expect(resolveSandboxClass(configured, "img", "standard-3").binding).toBe("LARGE");
    expect(
      resolveSandboxClass(configured, "img", { vcpu: 2, memoryMib: 8_192, diskMb: 12_000 }).binding,
    ).toBe("CUSTOM");
    expect(() => resolveSandboxClass(configured, "other", "basic")).toThrow(/unknown image other/);
    expect(() =>
      resolveSandboxClass(classes as SandboxClass[], "img", {
        vcpu: 4,
        memoryMib: 12_288,
        diskMb: 20_000,
      }),
    ).not.toThrow();
    expect(() => resolveSandboxClass([classes[0]] as SandboxClass[], "img", "standard-4")).toThrow(
      /no container application for image img is as large as standard-4/,
    );
  });
});
