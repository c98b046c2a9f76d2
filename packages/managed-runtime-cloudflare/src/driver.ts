import { NO_CREDENTIAL_EGRESS, describeProviderManagedRuntime } from "@open-managed-agents/managed-runtime-sandbox";
import {
  type ManagedRuntimeProfile,
  type ManagedRuntimeProviderDriverDescriptor,
  type ManagedRuntimeProviderDriverPort,
  type ManagedRuntimeProviderResources,
  CapabilityUnsupportedError,
  InvalidConfigError,
  managedRuntimeProviderDriverDescriptorSchema,
  parseRecord,
} from "@open-managed-agents/runtime-resource-contract";
import { type CloudflareManagedRuntime, composeCloudflareRuntime, compositionOptions } from "./composition.js";
import { CLOUDFLARE_CREDENTIAL_EGRESS } from "./egress/egress-port.js";
import { type CloudflareManagedRuntimeEnv, type CloudflareManagedRuntimeOptions, resolveCloudflareOptions } from "./options.js";
import { CLOUDFLARE_PROVIDER } from "./runtime/backup-handle.js";

/** Version the descriptor reports. */
export const CLOUDFLARE_DRIVER_VERSION = "0.1.0";

/**
 * The Cloudflare driver's ports for one profile (or, without a profile, with `readiness.command` set).
 * Options and the Worker environment are validated here, once.
 */
export function createCloudflareManagedRuntime<Env extends CloudflareManagedRuntimeEnv>(
  env: Env,
  options: CloudflareManagedRuntimeOptions<Env> & { readonly profile?: ManagedRuntimeProfile },
): CloudflareManagedRuntime {
  return composeCloudflareRuntime(resolveCloudflareOptions(env, options), options.profile);
}

/**
 * The Cloudflare managed-runtime driver. The descriptor is derived from the same resolved options the
 * ports are built from: `durable_mount` appears only with `workspaceDurableMount`, `final_collect` only
 * with an output store, enforced egress only with a credential vault, `mount` memory stores only with
 * `memoryStoreMount`.
 */
export function createCloudflareManagedRuntimeDriver<Env extends CloudflareManagedRuntimeEnv>(
  env: Env,
  options: CloudflareManagedRuntimeOptions<Env>,
): ManagedRuntimeProviderDriverPort {
  const resolved = resolveCloudflareOptions(env, options);
  const composed = describeProviderManagedRuntime(compositionOptions(resolved));
  const descriptor: ManagedRuntimeProviderDriverDescriptor = parseRecord(
    managedRuntimeProviderDriverDescriptorSchema,
    {
      provider: CLOUDFLARE_PROVIDER,
      version: CLOUDFLARE_DRIVER_VERSION,
      placements: ["in_process"],
      capabilities: {
        ...composed,
        workspace: { strategies: resolved.workspaceMount ? ["durable_mount", ...composed.workspace.strategies] : composed.workspace.strategies },
      },
      credentialEgress: resolved.credentialVault ? CLOUDFLARE_CREDENTIAL_EGRESS : NO_CREDENTIAL_EGRESS,
      ...(resolved.memoryMount ? { memoryStores: "mount" as const } : {}),
    },
    { record: "Cloudflare driver descriptor", code: "invalid_config" },
  );

  return {
    descriptor: () => descriptor,
    async create(input): Promise<ManagedRuntimeProviderResources> {
      if (!descriptor.placements.includes(input.placement)) {
        throw new CapabilityUnsupportedError({
          message: `${CLOUDFLARE_PROVIDER} runs only in_process, not ${input.placement}`,
          context: { placement: input.placement },
        });
      }
      const runtime = composeCloudflareRuntime(resolved, input.profile);
      return {
        sandbox: runtime.sandbox,
        workspace: runtime.workspace,
        outputs: runtime.outputs,
        harnessDriver: runtime.harnessDriver,
        ...(runtime.supervisorTransport ? { supervisorTransport: runtime.supervisorTransport } : {}),
        ...(runtime.credentialEgress ? { credentialEgress: runtime.credentialEgress } : {}),
        ...(resolved.sessionInputs ? { sessionInputs: resolved.sessionInputs } : {}),
        ...(runtime.environmentPackages ? { environmentPackages: runtime.environmentPackages } : {}),
        ...(runtime.memoryStores ? { memoryStores: runtime.memoryStores } : {}),
      };
    },
  };
}

/** Factory options of the loader entry: the Worker environment plus the driver options. */
export type CloudflareDriverFactoryOptions<Env extends CloudflareManagedRuntimeEnv = CloudflareManagedRuntimeEnv> = CloudflareManagedRuntimeOptions<Env> & {
  readonly env: Env;
};

/** The uniform loader entry (`loadManagedRuntimeProviderDriver` calls it with `factoryOptions`). */
export function createManagedRuntimeProviderDriver(factoryOptions: unknown): ManagedRuntimeProviderDriverPort {
  if (typeof factoryOptions !== "object" || factoryOptions === null || !("env" in factoryOptions)) {
    throw new InvalidConfigError({ message: "invalid Cloudflare driver factory options at env: the Worker environment is required", context: { field: "env" } });
  }
  const { env, ...options } = factoryOptions as CloudflareDriverFactoryOptions;
  return createCloudflareManagedRuntimeDriver(env, options);
}
