import {
  type CredentialEgressBinding,
  type CredentialEgressCapabilities,
  type CredentialEgressPort,
  type ManagedSandboxLease,
  type RuntimeResourceScope,
  AbortedError,
  InvalidRequestError,
} from "@open-managed-agents/runtime-resource-contract";
import type { CloudflareSandbox } from "../sandbox/cloudflare-sandbox.js";
import type { CloudflareCredentialVault } from "./credential-vault.js";
import {
  CREDENTIAL_EGRESS_HANDLER,
  type CredentialEgressParams,
  REVOKED_EGRESS_HANDLER,
} from "./outbound-names.js";

/** What the Cloudflare egress port enforces: deny-by-default interception of HTTP and HTTPS, credentials resolved per request. */
export const CLOUDFLARE_CREDENTIAL_EGRESS: CredentialEgressCapabilities = {
  enforcement: "enforced",
  credentialMode: "live",
  interceptedProtocols: ["http", "https"],
};

/** Dependencies of {@link createCloudflareCredentialEgressPort}. */
export interface CloudflareCredentialEgressDependencies {
  readonly vault: CloudflareCredentialVault;
  readonly controlPlaneOrigin: string | null;
  /** The sandbox behind a lease of this driver. */
  readonly sandbox: (input: {
    readonly scope: RuntimeResourceScope;
    readonly lease: ManagedSandboxLease;
  }) => Promise<CloudflareSandbox>;
}

const GONE = ["stopping", "stopped", "stopped_with_code"];

/**
 * Enforced, live credential egress. `prepare` opens an opaque vault binding; `attach` points the
 * container's outbound handler at it (the Worker resolves credentials per request, the container never
 * holds one); `revoke` revokes the binding in the vault first, then switches the container to the
 * refuse-everything handler.
 */
export function createCloudflareCredentialEgressPort(
  dependencies: CloudflareCredentialEgressDependencies,
): CredentialEgressPort {
  const { vault } = dependencies;
  const prepared = new Map<string, CredentialEgressBinding>();
  const attached = new Map<
    string,
    { readonly scope: RuntimeResourceScope; readonly lease: ManagedSandboxLease }
  >();

  const switchToRevoked = async (bindingId: string): Promise<void> => {
    const target = attached.get(bindingId);
    if (!target) return;
    const sandbox = await dependencies.sandbox(target);
    try {
      await sandbox.setOutboundHandler(REVOKED_EGRESS_HANDLER, {});
    } catch (error) {
      // A container that is gone has no traffic left to refuse; anything else must surface.
      if (!GONE.includes(await sandbox.containerState().catch(() => "running"))) throw error;
    }
    attached.delete(bindingId);
  };

  return {
    capabilities: async () => CLOUDFLARE_CREDENTIAL_EGRESS,

    async prepare({ scope, idempotencyKey, signal }) {
      if (signal.aborted)
        throw new AbortedError({ message: "credential egress prepare was aborted" });
      const existing = prepared.get(idempotencyKey);
      if (existing) return existing;
      const binding: CredentialEgressBinding = {
        bindingId: `egr_${crypto.randomUUID().replace(/-/g, "")}`,
        enforcement: "enforced",
        credentialMode: "live",
      };
      await vault.open({ bindingId: binding.bindingId, scope, signal });
      prepared.set(idempotencyKey, binding);
      return binding;
    },

    async attach({ scope, binding, sandbox: lease, signal }) {
      if (signal.aborted)
        throw new AbortedError({ message: "credential egress attach was aborted" });
      if (binding.enforcement !== "enforced")
        throw new InvalidRequestError({
          message: "the Cloudflare egress port attaches only enforced bindings",
        });
      const sandbox = await dependencies.sandbox({ scope, lease });
      const params: CredentialEgressParams = {
        bindingId: binding.bindingId,
        controlPlaneOrigin: dependencies.controlPlaneOrigin,
      };
      attached.set(binding.bindingId, { scope, lease });
      await sandbox.setOutboundHandler(CREDENTIAL_EGRESS_HANDLER, params);
    },

    async revoke({ binding }) {
      await vault.revoke({ bindingId: binding.bindingId });
      await switchToRevoked(binding.bindingId);
    },

    async release({ binding }) {
      await vault.revoke({ bindingId: binding.bindingId });
      attached.delete(binding.bindingId);
      for (const [key, value] of prepared)
        if (value.bindingId === binding.bindingId) prepared.delete(key);
    },
  };
}
