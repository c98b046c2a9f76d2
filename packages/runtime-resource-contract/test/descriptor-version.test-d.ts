import { describe, expectTypeOf, it } from "vitest";
import type {
  MANAGED_RUNTIME_SPECIFICATION_VERSION,
  ManagedRuntimeProviderDriverDescriptor,
  ManagedRuntimeSpecificationVersion,
  managedRuntimeProviderDriverDescriptorSchema,
} from "../src/index.js";
import type * as z from "zod";
import { descriptor } from "./fixtures.js";

describe("driver descriptor specification version", () => {
  it("is the literal v1, required", () => {
    expectTypeOf<ManagedRuntimeSpecificationVersion>().toEqualTypeOf<"v1">();
    expectTypeOf<typeof MANAGED_RUNTIME_SPECIFICATION_VERSION>().toEqualTypeOf<"v1">();
    expectTypeOf<
      ManagedRuntimeProviderDriverDescriptor["specificationVersion"]
    >().toEqualTypeOf<"v1">();
    expectTypeOf<ManagedRuntimeProviderDriverDescriptor>().toHaveProperty("specificationVersion");
  });

  it("refuses another revision or none by type", () => {
    const { specificationVersion: _omitted, ...unversioned } = descriptor;
    expectTypeOf(unversioned).not.toExtend<ManagedRuntimeProviderDriverDescriptor>();
    expectTypeOf({
      ...descriptor,
      specificationVersion: "v2" as const,
    }).not.toExtend<ManagedRuntimeProviderDriverDescriptor>();
    expectTypeOf({
      ...descriptor,
      specificationVersion: "v1" as string,
    }).not.toExtend<ManagedRuntimeProviderDriverDescriptor>();
  });

  it("the schema's output carries the same literal", () => {
    expectTypeOf<
      z.output<typeof managedRuntimeProviderDriverDescriptorSchema>["specificationVersion"]
    >().toEqualTypeOf<"v1">();
  });
});
