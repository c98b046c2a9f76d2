import { describe, expect, it } from "vitest";
import type {
  HarnessSupervisorTransportPort,
  ManagedRuntimeProfile,
  ManagedRuntimeProviderPlacement,
} from "@open-managed-agents/runtime-resource-contract";
import { createManagedRuntimeProviderRegistry } from "../src/registry/provider-registry.js";
import { createFakeCredentialEgressPort } from "../src/testing/fake-optional-ports.js";
import { createScriptedHarnessDriver } from "../src/testing/fake-harness.js";
import {
  type FakeProviderDriverOptions,
  createFakeProviderDriver,
} from "../src/testing/fake-runtime.js";
import { amaProfile, scope, supervisedProfile as supervised } from "./support/fixture.js";

const transport: HarnessSupervisorTransportPort = {
  open: async () => Promise.reject(new Error("not used")),
};

function prepare(
  options: FakeProviderDriverOptions,
  input: {
    profile?: ManagedRuntimeProfile;
    placement?: ManagedRuntimeProviderPlacement;
    provider?: string;
  } = {},
) {
  const registry = createManagedRuntimeProviderRegistry({
    drivers: [createFakeProviderDriver(options)],
  });
  return registry.prepare({
    provider: input.provider ?? "fake",
    placement: input.placement ?? "in_process",
    scope,
    profile: input.profile ?? amaProfile,
    providerConfig: { region: "local" },
  });
}

describe("createManagedRuntimeProviderRegistry", () => {
  it("admits a matching driver and returns its descriptor, plan and ports", async () => {
    const prepared = await prepare({});
    expect(prepared.plan).toEqual({
      workspaceStrategy: "checkpoint_restore",
      outputStrategy: "final_collect",
      runtimeCheckpoint: null,
      driver: "ama_worker",
    });
    expect(prepared.descriptor.provider).toBe("fake");
    expect(typeof prepared.resources.sandbox.acquire).toBe("function");
  });

  it("forwards the advertised plan and provider config to create", async () => {
    const driver = createFakeProviderDriver({});
    const create = driver.create;
    let seen: unknown;
    const registry = createManagedRuntimeProviderRegistry({
      drivers: [{ ...driver, create: async (input) => ((seen = input), create(input)) }],
    });
    await registry.prepare({
      provider: "fake",
      placement: "in_process",
      scope,
      profile: amaProfile,
      providerConfig: { region: "local" },
    });
    expect(seen).toMatchObject({
      environmentId: "env-1",
      placement: "in_process",
      providerConfig: { region: "local" },
      plan: { workspaceStrategy: "checkpoint_restore" },
    });
  });

  it("lists validated descriptors and refuses duplicate or invalid ones with invalid_config", () => {
    const registry = createManagedRuntimeProviderRegistry({
      drivers: [createFakeProviderDriver({}), createFakeProviderDriver({ provider: "other" })],
    });
    expect(registry.descriptors().map((descriptor) => descriptor.provider)).toEqual([
      "fake",
      "other",
    ]);
    expect(() =>
      createManagedRuntimeProviderRegistry({
        drivers: [createFakeProviderDriver({}), createFakeProviderDriver({})],
      }),
    ).toThrowError(
      expect.objectContaining({
        code: "invalid_config",
        context: expect.objectContaining({ provider: "fake", path: "drivers.1" }),
      }),
    );
    expect(() =>
      createManagedRuntimeProviderRegistry({
        drivers: [createFakeProviderDriver({ descriptor: { placements: [] } })],
      }),
    ).toThrowError(
      expect.objectContaining({
        code: "invalid_config",
        message: expect.stringContaining("placements"),
      }),
    );
  });

  it("refuses an unknown provider with invalid_request", async () => {
    await expect(prepare({}, { provider: "nope" })).rejects.toMatchObject({
      code: "invalid_request",
      context: { provider: "nope", known: ["fake"] },
    });
  });

  it("refuses a placement the driver does not list before creating anything", async () => {
    const driver = createFakeProviderDriver({ placements: ["driver_service"] });
    const registry = createManagedRuntimeProviderRegistry({ drivers: [driver] });
    await expect(
      registry.prepare({
        provider: "fake",
        placement: "in_process",
        scope,
        profile: amaProfile,
        providerConfig: {},
      }),
    ).rejects.toMatchObject({
      code: "capability_unsupported",
      context: { requirement: "placement", placement: "in_process" },
    });
    expect(driver.created).toHaveLength(0);
  });

  it("refuses a profile the advertisement cannot serve before creating anything", async () => {
    const driver = createFakeProviderDriver({ workspaceStrategies: ["ephemeral"] });
    const registry = createManagedRuntimeProviderRegistry({ drivers: [driver] });
    await expect(
      registry.prepare({
        provider: "fake",
        placement: "in_process",
        scope,
        profile: amaProfile,
        providerConfig: {},
      }),
    ).rejects.toMatchObject({
      code: "capability_unsupported",
      context: { requirement: "workspace", provider: "fake" },
    });
    expect(driver.created).toHaveLength(0);
  });

  it("refuses required egress unless the descriptor says enforced", async () => {
    await expect(
      prepare({
        credentialEgress: {
          enforcement: "advisory",
          credentialMode: "snapshot",
          interceptedProtocols: ["http"],
        },
      }),
    ).rejects.toMatchObject({
      code: "capability_unsupported",
      context: { requirement: "credential_egress", enforcement: "advisory" },
    });
  });

  it("refuses drift in a live capability the plan uses", async () => {
    await expect(
      prepare({
        descriptor: {
          capabilities: { ...baseCapabilities(), workspace: { strategies: ["durable_mount"] } },
        },
      }),
    ).rejects.toMatchObject({
      code: "capability_drift",
    });
  });

  it("refuses drift in harness lanes and output durability, which plan equality alone would miss", async () => {
    await expect(
      prepare({
        harness: { lanes: ["ama_worker"] },
        descriptor: {
          capabilities: {
            ...baseCapabilities(),
            harness: { drivers: ["ama_worker", "openma_supervised"] },
          },
        },
        resources: { supervisorTransport: transport },
      }),
    ).resolves.toBeDefined();
    await expect(
      prepare({
        harness: { lanes: ["ama_worker", "openma_supervised"] },
        descriptor: {
          capabilities: { ...baseCapabilities(), harness: { drivers: ["ama_worker"] } },
        },
      }),
    ).rejects.toMatchObject({ code: "capability_drift", context: { field: "harness.drivers" } });
    await expect(
      prepare(
        {
          outputs: { strategies: [{ strategy: "final_collect", durability: "best_effort" }] },
          descriptor: {
            capabilities: {
              ...baseCapabilities(),
              outputs: { strategies: [{ strategy: "final_collect", durability: "durable" }] },
            },
          },
        },
        { profile: { ...amaProfile, outputs: { requirement: "best_effort" } } },
      ),
    ).rejects.toMatchObject({ code: "capability_drift", context: { field: "outputs.strategies" } });
  });

  it("turns a live refusal of an advertised plan into drift", async () => {
    const capabilities = {
      ...baseCapabilities(),
      sandbox: {
        suspendResume: "supported",
        hardTerminate: "supported",
        runtimeCheckpoints: ["process"],
      },
    } as const;
    await expect(
      prepare(
        { runtimeCheckpoint: true, descriptor: { capabilities } },
        { profile: { ...amaProfile, runtimeCheckpoint: "required" } },
      ),
    ).rejects.toMatchObject({
      code: "capability_drift",
      context: { requirement: "runtime_checkpoint", provider: "fake" },
    });
  });

  it("wraps a supervisor transport into the supervised lane, and refuses the lane without one", async () => {
    const capabilities = {
      ...baseCapabilities(),
      harness: { drivers: ["ama_worker", "openma_supervised"] },
    } as const;
    const prepared = await prepare(
      {
        harness: { lanes: ["ama_worker"] },
        descriptor: { capabilities },
        resources: { supervisorTransport: transport },
      },
      { profile: supervised },
    );
    expect(prepared.plan.driver).toBe("openma_supervised");
    expect((await prepared.resources.harnessDriver.driverCapabilities(scope)).drivers).toEqual([
      "ama_worker",
      "openma_supervised",
    ]);
    await expect(
      prepare(
        { harness: { lanes: ["ama_worker"] }, descriptor: { capabilities } },
        { profile: supervised },
      ),
    ).rejects.toMatchObject({
      code: "capability_unsupported",
      context: { requirement: "harness_driver", driver: "openma_supervised" },
    });
  });

  it("refuses a planned runtime checkpoint when create returns no runtime-checkpoint port", async () => {
    const sandboxCapabilities = {
      suspendResume: "supported",
      hardTerminate: "supported",
      runtimeCheckpoints: ["filesystem"],
    } as const;
    await expect(
      prepare(
        { sandboxCapabilities },
        { profile: { ...amaProfile, runtimeCheckpoint: "optional" } },
      ),
    ).rejects.toMatchObject({
      code: "capability_drift",
      context: { field: "resources.runtimeCheckpoint" },
    });
  });

  it("refuses live egress that is missing or weaker than advertised", async () => {
    await expect(prepare({ resources: { credentialEgress: undefined } })).rejects.toMatchObject({
      code: "capability_drift",
      context: { field: "resources.credentialEgress" },
    });
    const advisory = createFakeCredentialEgressPort({
      enforcement: "advisory",
      credentialMode: "live",
      interceptedProtocols: ["http", "https"],
    });
    await expect(prepare({ resources: { credentialEgress: advisory } })).rejects.toMatchObject({
      code: "capability_drift",
      context: { field: "credentialEgress.enforcement", advertised: "enforced", live: "advisory" },
    });
  });

  it("refuses a malformed live capability answer as drift naming the field, not a raw TypeError", async () => {
    const driver = createFakeProviderDriver({});
    const create = driver.create;
    const malformed = (answer: unknown, port: "workspace" | "outputs" | "harnessDriver") =>
      createManagedRuntimeProviderRegistry({
        drivers: [
          {
            ...driver,
            create: async (input) => {
              const resources = await create(input);
              const method = port === "harnessDriver" ? "driverCapabilities" : "capabilities";
              return { ...resources, [port]: { ...resources[port], [method]: async () => answer } };
            },
          },
        ],
      }).prepare({
        provider: "fake",
        placement: "in_process",
        scope,
        profile: amaProfile,
        providerConfig: {},
      });
    await expect(malformed({}, "workspace")).rejects.toMatchObject({
      code: "capability_drift",
      context: { field: "workspace.strategies" },
    });
    await expect(malformed(null, "outputs")).rejects.toMatchObject({
      code: "capability_drift",
      context: { field: "outputs" },
    });
    await expect(malformed({ drivers: "ama_worker" }, "harnessDriver")).rejects.toMatchObject({
      code: "capability_drift",
      context: { field: "harness.drivers" },
    });
    const egress = {
      ...createFakeCredentialEgressPort(),
      capabilities: async () => ({ enforcement: "enforced" }),
    };
    await expect(prepare({ resources: { credentialEgress: egress } })).rejects.toMatchObject({
      code: "capability_drift",
      context: { field: "credentialEgress.credentialMode" },
    });
  });

  it("refuses a create() result without the required ports", async () => {
    await expect(prepare({ resources: { outputs: undefined } })).rejects.toMatchObject({
      code: "capability_drift",
      context: { field: "resources.outputs" },
    });
    await expect(
      prepare({ resources: { harnessDriver: createScriptedHarnessDriver() } }),
    ).resolves.toBeDefined();
  });
});

function baseCapabilities() {
  return createFakeProviderDriver({}).descriptor().capabilities;
}
