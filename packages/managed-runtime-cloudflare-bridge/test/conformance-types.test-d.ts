import type { BlobStore } from "@open-managed-agents/blob-store";
import { defineManagedRuntimeConformanceSuite } from "@open-managed-agents/managed-runtime-conformance/vitest";
import { describe, expectTypeOf, it } from "vitest";
import {
  type CloudflareBridgeDriverFactoryOptions,
  createManagedRuntimeProviderDriver,
} from "../src/index.js";

declare const store: BlobStore;

describe("the bridge's loader entry in the conformance suite", () => {
  it("typechecks as the suite's driver, with explicit or env factory options", () => {
    expectTypeOf(
      defineManagedRuntimeConformanceSuite<CloudflareBridgeDriverFactoryOptions>,
    ).toBeCallableWith({
      name: "bridge",
      driver: createManagedRuntimeProviderDriver,
      factoryOptions: {
        baseUrl: "http://127.0.0.1:8787",
        apiKey: "k",
        checkpointStore: store,
        outputStore: store,
      },
    });
    expectTypeOf(
      defineManagedRuntimeConformanceSuite<CloudflareBridgeDriverFactoryOptions>,
    ).toBeCallableWith({
      name: "bridge",
      driver: createManagedRuntimeProviderDriver,
      factoryOptions: {
        env: { OMA_CLOUDFLARE_BRIDGE_URL: "http://127.0.0.1:8787" },
        checkpointStore: store,
      },
    });
  });

  it("rejects factory options the driver does not take", () => {
    const wrong = () =>
      defineManagedRuntimeConformanceSuite({
        name: "bridge",
        driver: createManagedRuntimeProviderDriver,
        // @ts-expect-error baseUrl must be a string
        factoryOptions: { baseUrl: 1, apiKey: "k", checkpointStore: store },
      });
    expectTypeOf(wrong).toBeFunction();
  });
});
