import {
  NO_CREDENTIAL_EGRESS,
  createProviderManagedRuntimeDriver,
} from "@open-managed-agents/managed-runtime-sandbox";
import {
  type ManagedRuntimeProviderDriverPort,
  InvalidConfigError,
} from "@open-managed-agents/runtime-resource-contract";
import { cloudflareCapabilities, cloudflarePorts, compositionOptions } from "./cloudflare-ports.js";
import { CLOUDFLARE_CREDENTIAL_EGRESS } from "./egress/egress-port.js";
import {
  type CloudflareManagedRuntimeEnv,
  type CloudflareManagedRuntimeOptions,
  resolveCloudflareOptions,
} from "./options.js";
import { CLOUDFLARE_DRIVER_VERSION } from "./provider-id.js";

/**
 * Creates the `cloudflare` managed-runtime driver over the Cloudflare Sandbox SDK (`in_process`
 * placement). It is one call to the shared composition's driver factory; the descriptor is derived from
 * the same resolved options the ports are built from: `durable_mount` appears only with
 * `workspaceDurableMount`, `final_collect` only with an output store, enforced egress only with a
 * credential vault, `mount` memory stores only with `memoryStoreMount`. Options and the Worker
 * environment are validated here, once (`invalid_config`).
 */
export function createCloudflareManagedRuntime<Env extends CloudflareManagedRuntimeEnv>(
  env: Env,
  options: CloudflareManagedRuntimeOptions<Env>,
): ManagedRuntimeProviderDriverPort {
  const resolved = resolveCloudflareOptions(env, options);
  return createProviderManagedRuntimeDriver({
    specificationVersion: "v1",
    version: CLOUDFLARE_DRIVER_VERSION,
    placements: ["in_process"],
    composition: compositionOptions(resolved),
    credentialEgress: resolved.credentialVault
      ? CLOUDFLARE_CREDENTIAL_EGRESS
      : NO_CREDENTIAL_EGRESS,
    capabilities: cloudflareCapabilities(resolved),
    resources: (composition) => cloudflarePorts(resolved, composition),
  });
}

/** The seed's name of {@link createCloudflareManagedRuntime}: the same function, returning the same driver. */
export const createCloudflareManagedRuntimeDriver = createCloudflareManagedRuntime;

/** Factory options of the loader entry: the Worker environment plus the driver options. */
export type CloudflareDriverFactoryOptions<
  Env extends CloudflareManagedRuntimeEnv = CloudflareManagedRuntimeEnv,
> = CloudflareManagedRuntimeOptions<Env> & {
  readonly env: Env;
};

/** The uniform loader entry (`loadManagedRuntimeProviderDriver` calls it with `factoryOptions`). */
export function createManagedRuntimeProviderDriver(
  factoryOptions: unknown,
): ManagedRuntimeProviderDriverPort {
  if (typeof factoryOptions !== "object" || factoryOptions === null || !("env" in factoryOptions)) {
    throw new InvalidConfigError({
      message:
        "invalid Cloudflare driver factory options at env: the Worker environment is required",
      context: { field: "env" },
    });
  }
  const { env, ...options } = factoryOptions as CloudflareDriverFactoryOptions;
  return createCloudflareManagedRuntime(env, options);
}
