import {
  type ManagedRuntimeHostOptions,
  createManagedRuntimeHost,
  createManagedRuntimeProviderRegistry,
  loadManagedRuntimeProviderDriver,
} from "@open-managed-agents/managed-runtime-host";
import {
  InvalidConfigError,
  type ManagedRuntimeProviderDriverPort,
  type ManagedRuntimeProviderPlacement,
  UnsupportedOperationError,
} from "@open-managed-agents/runtime-resource-contract";
import type { ManagedEnvironmentWorkerOptions, ManagedRuntimeHostFactory } from "./options.js";
import { type ManagedEnvironmentWorker, createManagedEnvironmentWorker } from "./worker.js";

/** How this deployment relates to the Work API. */
export type ManagedEnvironmentWorkerInstallationMode =
  | "runtime_host"
  | "external_worker"
  | "provider_dispatch"
  | "provider_activation";

/** The driver a `runtime_host` installation runs items on: a driver object, or a package loaded by module specifier. */
export type InstallationDriver =
  | { readonly driver: ManagedRuntimeProviderDriverPort }
  | {
      readonly moduleSpecifier: string;
      readonly factoryOptions: unknown;
      readonly importModule?: (specifier: string) => Promise<unknown>;
    };

/** Options of a `runtime_host` installation: claim with this worker, then acquire through the host. */
export interface RuntimeHostInstallationOptions {
  readonly mode: "runtime_host";
  /** The worker's options; `host` may be left out when `provider` is given. */
  readonly worker: Omit<ManagedEnvironmentWorkerOptions, "host"> & {
    readonly host?: ManagedEnvironmentWorkerOptions["host"];
  };
  /** Builds one host per item on the admitted driver ports (`registry.prepare`). */
  readonly provider?: InstallationDriver & {
    readonly provider: string;
    readonly placement: ManagedRuntimeProviderPlacement;
    /** Non-secret adapter configuration handed to the driver's `create`. */
    readonly providerConfig?: Readonly<Record<string, unknown>>;
    /** Everything of the host but the driver ports. */
    readonly host: Omit<
      ManagedRuntimeHostOptions,
      | "sandbox"
      | "workspace"
      | "outputs"
      | "harnessDriver"
      | "runtimeCheckpoint"
      | "credentialEgress"
    >;
  };
}

/** Options of the other modes: nothing to configure. */
export interface OtherInstallationOptions {
  readonly mode: Exclude<ManagedEnvironmentWorkerInstallationMode, "runtime_host">;
}

/** What an installation runs. */
export type ManagedEnvironmentWorkerInstallation =
  | { readonly mode: "runtime_host"; readonly worker: ManagedEnvironmentWorker }
  /** An unmodified community worker claims and runs items itself; this deployment serves and starts nothing. */
  | { readonly mode: "external_worker"; readonly worker: null };

const UNSUPPORTED: Readonly<Record<"provider_dispatch" | "provider_activation", string>> = {
  provider_dispatch:
    "provider_dispatch needs the platform to push claimed items to a provider endpoint; the Work API offers poll and webhooks only, so a runtime_host worker must claim",
  provider_activation:
    "provider_activation needs the platform to start provider compute per item and hand it the item; the Work API has no activation call, so a runtime_host worker must claim",
};

/**
 * The one installation switch. `runtime_host` builds the environment worker (claim, then acquire
 * through the host; the driver may be loaded by module specifier through the host's loader);
 * `external_worker` builds nothing: the documented boundary for an unmodified community worker;
 * `provider_dispatch` and `provider_activation` are `unsupported_operation` with the reason.
 */
export async function createManagedEnvironmentWorkerInstallation(
  options: RuntimeHostInstallationOptions | OtherInstallationOptions,
): Promise<ManagedEnvironmentWorkerInstallation> {
  switch (options.mode) {
    case "external_worker":
      return { mode: "external_worker", worker: null };
    case "provider_dispatch":
    case "provider_activation":
      throw new UnsupportedOperationError({
        message: UNSUPPORTED[options.mode],
        context: { mode: options.mode },
      });
    case "runtime_host": {
      const host =
        options.worker.host ?? (options.provider ? await hostFactory(options.provider) : undefined);
      if (!host)
        throw new InvalidConfigError({
          message: "a runtime_host installation needs worker.host or provider",
          context: { field: "provider" },
        });
      return {
        mode: "runtime_host",
        worker: createManagedEnvironmentWorker({ ...options.worker, host }),
      };
    }
    default:
      throw new InvalidConfigError({
        message:
          "mode must be runtime_host, external_worker, provider_dispatch or provider_activation",
        context: { field: "mode" },
      });
  }
}

async function hostFactory(
  provider: NonNullable<RuntimeHostInstallationOptions["provider"]>,
): Promise<ManagedRuntimeHostFactory> {
  const driver =
    "driver" in provider
      ? provider.driver
      : await loadManagedRuntimeProviderDriver({
          provider: provider.provider,
          moduleSpecifier: provider.moduleSpecifier,
          factoryOptions: provider.factoryOptions,
          ...(provider.importModule ? { importModule: provider.importModule } : {}),
        });
  const registry = createManagedRuntimeProviderRegistry({ drivers: [driver] });
  return async ({ scope, profile }) => {
    const { resources } = await registry.prepare({
      provider: provider.provider,
      placement: provider.placement,
      scope,
      profile,
      providerConfig: provider.providerConfig ?? {},
    });
    // The supervisor transport is already inside the wrapped harness driver; the host takes ports only.
    const { supervisorTransport: _transport, ...ports } = resources;
    return createManagedRuntimeHost({ ...provider.host, ...ports });
  };
}
