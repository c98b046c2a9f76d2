import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { TEMPLATE_PROVIDER, createManagedRuntimeProviderDriver } from "../src/index.js";

function configError(run: () => unknown): ManagedRuntimeError {
  try {
    run();
  } catch (error) {
    if (ManagedRuntimeError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a typed error");
}

describe("createManagedRuntimeProviderDriver", () => {
  it("describes the template provider", () => {
    expect(
      createManagedRuntimeProviderDriver({ rootDir: "/tmp/driver-template" }).descriptor(),
    ).toMatchObject({ provider: TEMPLATE_PROVIDER, placements: ["in_process"] });
  });

  it.each([
    [{}, "rootDir"],
    [{ rootDir: "relative" }, "rootDir"],
    [{ rootDir: "/tmp/x", leaseTtlMs: 0 }, "leaseTtlMs"],
    [{ rootDir: "/tmp/x", unknown: true }, ""],
  ])("refuses %j with invalid_config naming %s", (options, field) => {
    const error = configError(() => createManagedRuntimeProviderDriver(options as never));
    expect(error.code).toBe("invalid_config");
    expect(error.message).toContain(field);
  });
});
