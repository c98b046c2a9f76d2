import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { createDestroyedSandboxes } from "../src/index.js";

describe("createDestroyedSandboxes", () => {
  it("refuses a remembered sandbox with lease_lost naming the operation, and lets others through", () => {
    const destroyed = createDestroyedSandboxes();
    destroyed.remember("sbx-1");
    expect(destroyed.has("sbx-1")).toBe(true);
    expect(destroyed.has("sbx-2")).toBe(false);
    expect(() => destroyed.refuse("sbx-2", "exec")).not.toThrow();
    const refused = (() => {
      try {
        destroyed.refuse("sbx-1", "exec");
      } catch (error) {
        return error;
      }
      return null;
    })();
    expect(ManagedRuntimeError.hasCode(refused, "lease_lost")).toBe(true);
    expect((refused as ManagedRuntimeError).context).toMatchObject({
      runtimeId: "sbx-1",
      operation: "exec",
    });
  });

  it("forgets the oldest ids past its capacity, and a re-remembered id counts as new", () => {
    const destroyed = createDestroyedSandboxes({ capacity: 2 });
    destroyed.remember("a");
    destroyed.remember("b");
    destroyed.remember("a");
    destroyed.remember("c");
    expect(["a", "b", "c"].filter((id) => destroyed.has(id))).toEqual(["a", "c"]);
  });
});
