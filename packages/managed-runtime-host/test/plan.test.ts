import { describe, expect, it } from "vitest";
import {
  type ManagedRuntimeProfile,
  type ManagedRuntimeResourceCapabilities,
  ManagedRuntimeError,
} from "@open-managed-agents/runtime-resource-contract";
import { resolveManagedRuntimePlan } from "../src/plan.js";
import { amaProfile, supervisedProfile } from "./support/fixture.js";

const everything: ManagedRuntimeResourceCapabilities = {
  sandbox: {
    suspendResume: "supported",
    hardTerminate: "supported",
    runtimeCheckpoints: ["filesystem", "process"],
  },
  workspace: {
    strategies: ["ephemeral", "retained_runtime", "checkpoint_restore", "durable_mount"],
  },
  outputs: {
    strategies: [
      { strategy: "final_collect", durability: "durable" },
      { strategy: "watch_and_upload", durability: "best_effort" },
      { strategy: "durable_mount", durability: "best_effort" },
    ],
  },
  harness: { drivers: ["ama_worker"] },
};

function with_(
  capabilities: Partial<ManagedRuntimeResourceCapabilities>,
): ManagedRuntimeResourceCapabilities {
  return { ...everything, ...capabilities };
}

function refusal(
  profile: ManagedRuntimeProfile,
  capabilities: ManagedRuntimeResourceCapabilities,
): ManagedRuntimeError {
  try {
    resolveManagedRuntimePlan(profile, capabilities);
  } catch (error) {
    if (ManagedRuntimeError.hasCode(error, "capability_unsupported")) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("resolveManagedRuntimePlan", () => {
  it("prefers durable_mount, the first eligible strategy, by default", () => {
    expect(
      resolveManagedRuntimePlan({ ...amaProfile, runtimeCheckpoint: "optional" }, everything),
    ).toEqual({
      workspaceStrategy: "durable_mount",
      outputStrategy: "final_collect",
      runtimeCheckpoint: "process",
      driver: "ama_worker",
    });
  });

  it("tries preferred strategies first, ignoring those the requirement does not allow", () => {
    const plan = resolveManagedRuntimePlan(
      {
        ...amaProfile,
        workspace: {
          requirement: "durable",
          preferredStrategies: ["ephemeral", "checkpoint_restore"],
        },
      },
      everything,
    );
    expect(plan.workspaceStrategy).toBe("checkpoint_restore");
  });

  it("treats preferred workspace strategies as the acceptable set: none offered is capability_unsupported", () => {
    const error = refusal(
      {
        ...amaProfile,
        workspace: { requirement: "continuable", preferredStrategies: ["durable_mount"] },
      },
      with_({ workspace: { strategies: ["retained_runtime", "ephemeral"] } }),
    );
    expect(error.message).toContain(
      "cannot provide a continuable workspace with the preferred strategies durable_mount (offered: retained_runtime, ephemeral)",
    );
    expect(error.context).toMatchObject({
      requirement: "workspace",
      workspaceRequirement: "continuable",
      preferences: ["durable_mount"],
      offered: ["retained_runtime", "ephemeral"],
    });
  });

  it("picks the first offered preference in the order given, not the default order", () => {
    const plan = resolveManagedRuntimePlan(
      {
        ...amaProfile,
        workspace: {
          requirement: "continuable",
          preferredStrategies: ["retained_runtime", "durable_mount"],
        },
      },
      everything,
    );
    expect(plan.workspaceStrategy).toBe("retained_runtime");
  });

  it("refuses when every preference is one the requirement does not allow, and treats an empty list as no preference", () => {
    const error = refusal(
      { ...amaProfile, workspace: { requirement: "durable", preferredStrategies: ["ephemeral"] } },
      everything,
    );
    expect(error.context).toMatchObject({ requirement: "workspace", preferences: ["ephemeral"] });
    expect(
      resolveManagedRuntimePlan(
        { ...amaProfile, workspace: { requirement: "durable", preferredStrategies: [] } },
        everything,
      ).workspaceStrategy,
    ).toBe("durable_mount");
  });

  it("treats preferred output strategies as the acceptable set too", () => {
    const profile: ManagedRuntimeProfile = {
      ...amaProfile,
      outputs: { requirement: "best_effort", preferredStrategies: ["durable_mount"] },
    };
    const error = refusal(
      profile,
      with_({ outputs: { strategies: [{ strategy: "final_collect", durability: "durable" }] } }),
    );
    expect(error.message).toContain(
      "cannot provide best_effort Session outputs with the preferred strategies durable_mount",
    );
    expect(error.context).toMatchObject({
      requirement: "outputs",
      outputRequirement: "best_effort",
      preferences: ["durable_mount"],
      offered: ["final_collect/durable"],
    });
  });

  it.each([
    ["durable", ["retained_runtime", "ephemeral"], "cannot provide a durable workspace"],
    ["continuable", ["ephemeral"], "cannot provide a continuable workspace"],
    ["ephemeral", [], "cannot provide an ephemeral workspace"],
  ] as const)("refuses a %s workspace from %j", (requirement, strategies, message) => {
    const error = refusal(
      { ...amaProfile, workspace: { requirement } },
      with_({ workspace: { strategies } }),
    );
    expect(error.message).toContain(message);
    expect(error.context).toMatchObject({
      requirement: "workspace",
      workspaceRequirement: requirement,
      offered: [...strategies],
    });
  });

  it("counts only durable output strategies for durable outputs", () => {
    const capabilities = with_({
      outputs: { strategies: [{ strategy: "durable_mount", durability: "best_effort" }] },
    });
    expect(
      resolveManagedRuntimePlan(
        { ...amaProfile, outputs: { requirement: "best_effort" } },
        capabilities,
      ).outputStrategy,
    ).toBe("durable_mount");
    const error = refusal({ ...amaProfile, outputs: { requirement: "durable" } }, capabilities);
    expect(error.message).toContain("cannot provide durable Session outputs");
    expect(error.context).toMatchObject({
      requirement: "outputs",
      offered: ["durable_mount/best_effort"],
    });
  });

  it("plans no outputs when they are disabled, whatever is offered", () => {
    expect(
      resolveManagedRuntimePlan(
        { ...amaProfile, outputs: { requirement: "disabled" } },
        with_({ outputs: { strategies: [] } }),
      ).outputStrategy,
    ).toBeNull();
  });

  it("orders outputs durable_mount, watch_and_upload, final_collect unless preferences say otherwise", () => {
    const best = { ...amaProfile, outputs: { requirement: "best_effort" as const } };
    expect(resolveManagedRuntimePlan(best, everything).outputStrategy).toBe("durable_mount");
    expect(
      resolveManagedRuntimePlan(
        {
          ...best,
          outputs: { requirement: "best_effort", preferredStrategies: ["final_collect"] },
        },
        everything,
      ).outputStrategy,
    ).toBe("final_collect");
  });

  it("prefers process checkpoints, requires a match only when required, and skips them when disabled", () => {
    const filesystemOnly = with_({
      sandbox: { ...everything.sandbox, runtimeCheckpoints: ["filesystem"] },
    });
    const none = with_({ sandbox: { ...everything.sandbox, runtimeCheckpoints: [] } });
    expect(
      resolveManagedRuntimePlan({ ...amaProfile, runtimeCheckpoint: "required" }, filesystemOnly)
        .runtimeCheckpoint,
    ).toBe("filesystem");
    expect(
      resolveManagedRuntimePlan({ ...amaProfile, runtimeCheckpoint: "optional" }, none)
        .runtimeCheckpoint,
    ).toBeNull();
    expect(
      resolveManagedRuntimePlan({ ...amaProfile, runtimeCheckpoint: "disabled" }, everything)
        .runtimeCheckpoint,
    ).toBeNull();
    const error = refusal({ ...amaProfile, runtimeCheckpoint: "required" }, none);
    expect(error.message).toContain("cannot provide a runtime checkpoint");
    expect(error.context.requirement).toBe("runtime_checkpoint");
  });

  it("requires the profile's harness lane", () => {
    const error = refusal(supervisedProfile, everything);
    expect(error.message).toContain("cannot run the openma_supervised harness driver");
    expect(error.context).toMatchObject({
      requirement: "harness_driver",
      driver: "openma_supervised",
      offered: ["ama_worker"],
    });
  });
});
