import { type ProviderManagedRuntime, createProviderManagedRuntime } from "@open-managed-agents/managed-runtime-sandbox";
import type { ProviderManagedRuntimeOptions } from "@open-managed-agents/managed-runtime-sandbox";
import {
  type CredentialEgressPort,
  type ManagedRuntimeProfile,
  type ManagedSandboxPort,
  type RuntimeEnvironment,
  type SandboxResourceCapabilities,
  type WorkspacePersistencePort,
  WORKSPACE_MOUNT_PATH,
} from "@open-managed-agents/runtime-resource-contract";
import { createCloudflareCredentialEgressPort } from "./egress/egress-port.js";
import type { CloudflareManagedRuntimeEnv, ResolvedCloudflareOptions } from "./options.js";
import { createCloudflareSandboxProvider } from "./provider.js";
import { CLOUDFLARE_PROVIDER } from "./runtime/backup-handle.js";
import type { CloudflareRuntime } from "./runtime/cloudflare-runtime.js";
import { withUsageRecording } from "./usage/usage-recording.js";
import { withDurableWorkspaceMount } from "./workspace/durable-mount.js";

/** What the Cloudflare sandbox port advertises: hard terminate, no retained runtimes, no runtime checkpoints. */
export const CLOUDFLARE_SANDBOX_CAPABILITIES: SandboxResourceCapabilities = { suspendResume: "unsupported", hardTerminate: "supported", runtimeCheckpoints: [] };

/** The Cloudflare driver's ports for one profile. */
export interface CloudflareManagedRuntime extends Omit<ProviderManagedRuntime<CloudflareRuntime>, "sandbox" | "workspace"> {
  readonly sandbox: ManagedSandboxPort;
  readonly workspace: WorkspacePersistencePort;
  /** Present when a credential vault is configured. */
  readonly credentialEgress?: CredentialEgressPort;
  /** The declared runtime environment (the image the container class boots). */
  readonly runtimeEnvironment: RuntimeEnvironment;
}

/** The composition options the driver derives from its resolved options. */
export function compositionOptions<Env extends CloudflareManagedRuntimeEnv>(
  resolved: ResolvedCloudflareOptions<Env>,
): Omit<ProviderManagedRuntimeOptions<CloudflareRuntime>, "profile"> {
  return {
    providerName: CLOUDFLARE_PROVIDER,
    provider: createCloudflareSandboxProvider({
      env: resolved.env,
      createSandbox: resolved.createSandbox,
      backupTtlSec: resolved.backupTtlSec,
      memoryMount: resolved.memoryMount,
    }),
    context: (scope) => ({ sessionId: scope.sessionId, workdir: WORKSPACE_MOUNT_PATH }),
    leaseTtlMs: resolved.leaseTtlMs,
    sandboxCapabilities: CLOUDFLARE_SANDBOX_CAPABILITIES,
    workspace: { strategies: ["checkpoint_restore"] },
    ...(resolved.outputs ? { outputs: { store: resolved.outputs.store, keyPrefix: resolved.outputs.keyPrefix, durability: "durable" as const } } : {}),
    ...(resolved.readiness ? { readiness: resolved.readiness } : {}),
    // The supervised lane rides on duplex processes whose stdin the file-fed wrapper carries.
    drivers: ["ama_worker", "openma_supervised"],
    // Only with a memory bucket: each runtime's mountMemoryStore then mounts the store's prefix over FUSE.
    ...(resolved.memoryMount ? { memoryStores: "mount" as const } : {}),
  };
}

/** Builds every port of the driver for one profile over the composition. */
export function composeCloudflareRuntime<Env extends CloudflareManagedRuntimeEnv>(
  resolved: ResolvedCloudflareOptions<Env>,
  profile: ManagedRuntimeProfile | undefined,
): CloudflareManagedRuntime {
  const composition = createProviderManagedRuntime({ ...compositionOptions(resolved), ...(profile ? { profile } : {}) });
  const ports = resolved.workspaceMount
    ? withDurableWorkspaceMount({ settings: resolved.workspaceMount, sandbox: composition.sandbox, workspace: composition.workspace, runtime: composition.runtime })
    : { sandbox: composition.sandbox, workspace: composition.workspace };
  const credentialEgress = resolved.credentialVault
    ? createCloudflareCredentialEgressPort({
        vault: resolved.credentialVault,
        controlPlaneOrigin: resolved.controlPlaneOrigin,
        sandbox: async (input) => (await composition.runtime(input)).sandbox,
      })
    : undefined;
  return {
    ...composition,
    sandbox: resolved.usage ? withUsageRecording(ports.sandbox, resolved.usage) : ports.sandbox,
    workspace: ports.workspace,
    ...(credentialEgress ? { credentialEgress } : {}),
    runtimeEnvironment: resolved.runtimeEnvironment,
  };
}
