import type { ManagedRuntimeProviderDriverPort } from "@open-managed-agents/runtime-resource-contract";
import { describe, expectTypeOf, it } from "vitest";
import {
  type ManagedRuntimeConformanceOptions,
  runManagedRuntimeConformance,
} from "../src/index.js";
import { defineManagedRuntimeConformanceSuite } from "../src/vitest/index.js";

/** A driver package's typed options, as a driver author writes them. */
interface AcmeOptions {
  readonly endpoint: string;
  readonly apiKey: string;
}
declare const createAcmeDriver: (options: AcmeOptions) => ManagedRuntimeProviderDriverPort;
declare const createAsyncAcmeDriver: (
  options: AcmeOptions,
) => Promise<ManagedRuntimeProviderDriverPort>;
declare const acmeDriver: ManagedRuntimeProviderDriverPort;

describe("defineManagedRuntimeConformanceSuite under strict TypeScript", () => {
  it("accepts a factory with typed options, sync or async", () => {
    expectTypeOf(defineManagedRuntimeConformanceSuite<AcmeOptions>).toBeCallableWith({
      name: "acme",
      driver: createAcmeDriver,
      factoryOptions: { endpoint: "https://acme.test", apiKey: "k" },
    });
    expectTypeOf(defineManagedRuntimeConformanceSuite<AcmeOptions>).toBeCallableWith({
      name: "acme",
      driver: createAsyncAcmeDriver,
      factoryOptions: { endpoint: "https://acme.test", apiKey: "k" },
    });
    expectTypeOf(runManagedRuntimeConformance<AcmeOptions>).toBeCallableWith({
      name: "acme",
      driver: createAcmeDriver,
      factoryOptions: { endpoint: "https://acme.test", apiKey: "k" },
    });
  });

  it("infers the factory's options and checks factoryOptions against them", () => {
    const define = () =>
      defineManagedRuntimeConformanceSuite({
        name: "acme",
        driver: createAcmeDriver,
        factoryOptions: { endpoint: "https://acme.test", apiKey: "k" },
      });
    expectTypeOf(define).returns.toBeVoid();
    const wrong = () =>
      defineManagedRuntimeConformanceSuite({
        name: "acme",
        driver: createAcmeDriver,
        // @ts-expect-error factoryOptions of the wrong shape for the factory
        factoryOptions: { endpoint: 1 },
      });
    expectTypeOf(wrong).toBeFunction();
    expectTypeOf<ManagedRuntimeConformanceOptions<AcmeOptions>["factoryOptions"]>().toEqualTypeOf<
      AcmeOptions | undefined
    >();
  });

  it("still accepts a driver object, a loader entry and untyped factory options", () => {
    expectTypeOf(defineManagedRuntimeConformanceSuite).toBeCallableWith({
      name: "acme",
      driver: acmeDriver,
    });
    expectTypeOf(defineManagedRuntimeConformanceSuite).toBeCallableWith({
      name: "acme",
      loadDriver: { provider: "acme", moduleSpecifier: "@acme/driver" },
      factoryOptions: { anything: true },
    });
    expectTypeOf<ManagedRuntimeConformanceOptions["factoryOptions"]>().toEqualTypeOf<unknown>();
  });
});
