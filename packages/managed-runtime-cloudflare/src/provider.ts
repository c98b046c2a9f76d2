import {
  UnsupportedOperationError,
  ProviderMismatchError,
} from "@open-managed-agents/runtime-resource-contract";
import { createDestroyedSandboxes } from "@open-managed-agents/managed-runtime-sandbox";
import type { SandboxFactoryContext, SandboxProviderPort } from "@open-managed-agents/sandbox";
import type { CloudflareManagedRuntimeEnv, CloudflareManagedRuntimeOptions } from "./options.js";
import { CLOUDFLARE_PROVIDER } from "./provider-id.js";
import { backupFromCheckpointHandle } from "./runtime/backup-handle.js";
import type { MemoryMountSettings } from "./memory/memory-mount.js";
import { type CloudflareRuntime, createCloudflareRuntime } from "./runtime/cloudflare-runtime.js";
import { guardDestroyedSandbox } from "./runtime/guarded-sandbox.js";

/** Options of {@link createCloudflareSandboxProvider}. */
export interface CloudflareSandboxProviderOptions<Env extends CloudflareManagedRuntimeEnv> {
  readonly env: Env;
  readonly createSandbox: CloudflareManagedRuntimeOptions<Env>["createSandbox"];
  /** Lifetime of workspace backups in seconds. */
  readonly backupTtlSec: number;
  /** The memory bucket of `mountMemoryStore`; absent: runtimes cannot mount memory stores. */
  readonly memoryMount?: MemoryMountSettings | null;
}

/**
 * A fresh runtime id: one container (one Sandbox Durable Object) per acquire. Ids are never reused, so
 * reaping an old lease can never stop a newer work item's container. Lowercase, as preview URLs need.
 */
export function newRuntimeId(): string {
  return `oma-${crypto.randomUUID()}`;
}

/**
 * The {@link SandboxProviderPort} of the Cloudflare driver. `resume` is refused: a container cannot be
 * retained; `restore` starts a new container and applies the backup, destroying the container when that fails.
 * A runtime the provider destroyed refuses every later call with `lease_lost` (see guarded-sandbox.ts).
 */
export function createCloudflareSandboxProvider<Env extends CloudflareManagedRuntimeEnv>(
  options: CloudflareSandboxProviderOptions<Env>,
): SandboxProviderPort<CloudflareRuntime> {
  // Once this driver destroyed a runtime, nothing it does afterwards may start that sandbox again.
  const destroyed = createDestroyedSandboxes();
  const open = async (runtimeId: string): Promise<CloudflareRuntime> =>
    createCloudflareRuntime({
      sandbox: guardDestroyedSandbox(
        destroyed,
        runtimeId,
        await options.createSandbox(options.env, runtimeId),
      ),
      runtimeId,
      backupTtlSec: options.backupTtlSec,
      memoryMount: options.memoryMount ?? null,
    });
  // The driver chooses the id, so the journal record is written before the Durable Object is addressed.
  const start = async (context: SandboxFactoryContext | undefined): Promise<CloudflareRuntime> => {
    const runtimeId = newRuntimeId();
    await context?.beforeStart?.(runtimeId);
    return open(runtimeId);
  };

  return {
    provider: CLOUDFLARE_PROVIDER,
    create: (context) => start(context),
    async resume(handle) {
      if (handle.provider !== CLOUDFLARE_PROVIDER) {
        throw new ProviderMismatchError({
          message: `handle belongs to provider "${handle.provider}", not "${CLOUDFLARE_PROVIDER}"`,
          context: { expected: CLOUDFLARE_PROVIDER, actual: handle.provider },
        });
      }
      throw new UnsupportedOperationError({
        message: "Cloudflare containers cannot be resumed from a runtime-scoped handle",
      });
    },
    async restore(checkpoint, context) {
      backupFromCheckpointHandle(checkpoint);
      const runtime = await start(context);
      try {
        await runtime.resume(checkpoint);
        return runtime;
      } catch (error) {
        await runtime.destroy().catch(() => undefined);
        throw error;
      }
    },
    connect: (runtimeId) => open(runtimeId),
  };
}
