import type {
  ProviderManagedRuntime,
  ProviderManagedRuntimeExtraResources,
  ProviderManagedRuntimeOptions,
} from "@open-managed-agents/managed-runtime-sandbox";
import {
  type ManagedRuntimeResourceCapabilities,
  type SandboxResourceCapabilities,
  WORKSPACE_MOUNT_PATH,
} from "@open-managed-agents/runtime-resource-contract";
import { createCloudflareCredentialEgressPort } from "./egress/egress-port.js";
import type { CloudflareManagedRuntimeEnv, ResolvedCloudflareOptions } from "./options.js";
import { createCloudflareSandboxProvider } from "./provider.js";
import { CLOUDFLARE_PROVIDER } from "./provider-id.js";
import type { CloudflareRuntime } from "./runtime/cloudflare-runtime.js";
import { withUsageRecording } from "./usage/usage-recording.js";
import { withDurableWorkspaceMount } from "./workspace/durable-mount.js";

/** What the Cloudflare sandbox port advertises: hard terminate, no retained runtimes, no runtime checkpoints. */
export const CLOUDFLARE_SANDBOX_CAPABILITIES: SandboxResourceCapabilities = {
  suspendResume: "unsupported",
  hardTerminate: "supported",
  runtimeCheckpoints: [],
};

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
    ...(resolved.outputs
      ? {
          outputs: {
            store: resolved.outputs.store,
            keyPrefix: resolved.outputs.keyPrefix,
            durability: "durable" as const,
          },
        }
      : {}),
    ...(resolved.readiness ? { readiness: resolved.readiness } : {}),
    // The supervised lane rides on duplex processes whose stdin the file-fed wrapper carries.
    drivers: ["ama_worker", "openma_supervised"],
    // Only with a memory bucket: each runtime's mountMemoryStore then mounts the store's prefix over FUSE.
    ...(resolved.memoryMount ? { memoryStores: "mount" as const } : {}),
  };
}

/** The composition's capabilities plus `durable_mount`, first, when the durable workspace mount is configured. */
export function cloudflareCapabilities<Env extends CloudflareManagedRuntimeEnv>(
  resolved: ResolvedCloudflareOptions<Env>,
): (derived: ManagedRuntimeResourceCapabilities) => ManagedRuntimeResourceCapabilities {
  return (derived) =>
    resolved.workspaceMount
      ? {
          ...derived,
          workspace: { strategies: ["durable_mount", ...derived.workspace.strategies] },
        }
      : derived;
}

/**
 * The ports the Cloudflare driver adds over the composition of one create: the durable workspace mount
 * around the sandbox and workspace ports, usage recording around the sandbox port, credential egress with
 * a vault, and the configured session-input materializer.
 */
export function cloudflarePorts<Env extends CloudflareManagedRuntimeEnv>(
  resolved: ResolvedCloudflareOptions<Env>,
  composition: ProviderManagedRuntime<CloudflareRuntime>,
): ProviderManagedRuntimeExtraResources {
  const ports = resolved.workspaceMount
    ? withDurableWorkspaceMount({
        settings: resolved.workspaceMount,
        sandbox: composition.sandbox,
        workspace: composition.workspace,
        runtime: composition.runtime,
      })
    : { sandbox: composition.sandbox, workspace: composition.workspace };
  const credentialEgress = resolved.credentialVault
    ? createCloudflareCredentialEgressPort({
        vault: resolved.credentialVault,
        controlPlaneOrigin: resolved.controlPlaneOrigin,
        sandbox: async (input) => (await composition.runtime(input)).sandbox,
      })
    : undefined;
  return {
    sandbox: resolved.usage ? withUsageRecording(ports.sandbox, resolved.usage) : ports.sandbox,
    workspace: ports.workspace,
    ...(credentialEgress ? { credentialEgress } : {}),
    ...(resolved.sessionInputs ? { sessionInputs: resolved.sessionInputs } : {}),
  };
}
