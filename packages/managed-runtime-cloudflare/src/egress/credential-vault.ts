import type { RuntimeResourceScope } from "@open-managed-agents/runtime-resource-contract";

/** What the vault decides for one outbound request of a sandbox. */
export type CredentialVaultDecision =
  /** Forward the request, setting these headers (credentials) on it; an empty record forwards it unchanged. */
  | { readonly type: "forward"; readonly headers: Readonly<Record<string, string>> }
  /** Refuse the request: the host is not allowed for this binding. */
  | { readonly type: "deny"; readonly reason?: string };

/**
 * The vault behind enforced credential egress. The driver opens and revokes bindings from the host; the
 * Worker's outbound handler resolves each intercepted request against the binding, so credentials are
 * looked up live and never leave the Worker. Binding ids are opaque and not secret; credentials never
 * appear in a binding, its params or a decision's reason.
 */
export interface CloudflareCredentialVault {
  /** Registers a binding for a work item's scope. Idempotent per binding id. */
  open(input: {
    readonly bindingId: string;
    readonly scope: RuntimeResourceScope;
    readonly signal: AbortSignal;
  }): Promise<void>;
  /** Decides one request. Must deny for a revoked or unknown binding. */
  resolve(input: {
    readonly bindingId: string;
    readonly url: URL;
    readonly method: string;
  }): Promise<CredentialVaultDecision>;
  /** Stops serving credentials for the binding. Idempotent. */
  revoke(input: { readonly bindingId: string }): Promise<void>;
}
