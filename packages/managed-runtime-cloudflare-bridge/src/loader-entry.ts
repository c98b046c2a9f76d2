import type { BlobStore } from "@open-managed-agents/blob-store";
import {
  InvalidConfigError,
  type ManagedRuntimeProviderDriverPort,
} from "@open-managed-agents/runtime-resource-contract";
import { createCloudflareBridgeManagedRuntime } from "./driver.js";
import { type CloudflareBridgeEnv, cloudflareBridgeOptionsFromEnv } from "./env-options.js";
import type { CloudflareBridgeManagedRuntimeOptions } from "./options.js";

/** Factory options of the loader entry: explicit options, or `env` mapped by {@link cloudflareBridgeOptionsFromEnv}. */
export type CloudflareBridgeDriverFactoryOptions =
  | CloudflareBridgeManagedRuntimeOptions
  | ({
      readonly env: CloudflareBridgeEnv;
      readonly checkpointStore?: BlobStore;
      readonly outputStore?: BlobStore | null;
    } & Partial<Omit<CloudflareBridgeManagedRuntimeOptions, "checkpointStore" | "outputStore">>);

/**
 * The loader entry: `loadManagedRuntimeProviderDriver({provider: "cloudflare-bridge", moduleSpecifier:
 * "@open-managed-agents/managed-runtime-cloudflare-bridge", factoryOptions})` calls it.
 */
export function createManagedRuntimeProviderDriver(
  factoryOptions: CloudflareBridgeDriverFactoryOptions,
): ManagedRuntimeProviderDriverPort {
  if (typeof factoryOptions !== "object" || factoryOptions === null) {
    throw new InvalidConfigError({
      message: "cloudflare-bridge factory options must be an object",
    });
  }
  if (!("env" in factoryOptions)) return createCloudflareBridgeManagedRuntime(factoryOptions);
  const { env, checkpointStore, outputStore, ...overrides } = factoryOptions;
  return createCloudflareBridgeManagedRuntime({
    ...cloudflareBridgeOptionsFromEnv(env, { checkpointStore, outputStore }),
    ...overrides,
  });
}
