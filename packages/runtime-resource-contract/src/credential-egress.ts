import type { CredentialEgressRequirement } from "./profile.js";
import type { RuntimeResourceFence } from "./fence.js";
import type { ManagedSandboxLease } from "./sandbox.js";
import type { Abortable, RuntimeResourceScope, TerminationReason } from "./scope.js";

/** `enforced`: a deny-by-default path the guest cannot bypass. `advisory`: proxy settings only. */
export type CredentialEgressEnforcement = "enforced" | "advisory" | "unsupported";
/** `live`: credentials resolved per request; `snapshot`: resolved once at attach. */
export type CredentialEgressMode = "live" | "snapshot";
/** Protocols whose outbound traffic is intercepted. */
export type CredentialEgressProtocol = "http" | "https" | "tcp";

/** What the egress port enforces. */
export interface CredentialEgressCapabilities {
  readonly enforcement: CredentialEgressEnforcement;
  readonly credentialMode: CredentialEgressMode;
  readonly interceptedProtocols: readonly CredentialEgressProtocol[];
}

/**
 * Transient handle of prepared egress. The sandbox sees only `bindingId`, which is opaque and not a
 * secret, yet it is never persisted in a lease, checkpoint, log or wire body.
 */
export interface CredentialEgressBinding {
  readonly bindingId: string;
  readonly enforcement: Exclude<CredentialEgressEnforcement, "unsupported">;
  readonly credentialMode: CredentialEgressMode;
}

/** Brokered credential egress: vault credentials injected outside the sandbox. */
export interface CredentialEgressPort {
  capabilities(scope: RuntimeResourceScope): Promise<CredentialEgressCapabilities>;
  /** Prepares network policy before acquire. Null when nothing is needed; the host fails a `required` profile on null. */
  prepare(
    input: Abortable & {
      readonly scope: RuntimeResourceScope;
      readonly fence: RuntimeResourceFence;
      readonly requirement: Exclude<CredentialEgressRequirement, "disabled">;
      readonly idempotencyKey: string;
    },
  ): Promise<CredentialEgressBinding | null>;
  /** Binds the policy to the acquired sandbox. */
  attach(
    input: Abortable & {
      readonly scope: RuntimeResourceScope;
      readonly fence: RuntimeResourceFence;
      readonly binding: CredentialEgressBinding;
      readonly sandbox: ManagedSandboxLease;
    },
  ): Promise<void>;
  /** Stops injecting credentials. Runs before compute is terminated or retained. */
  revoke(input: {
    readonly scope: RuntimeResourceScope;
    readonly fence: RuntimeResourceFence;
    readonly binding: CredentialEgressBinding;
    readonly reason: TerminationReason;
  }): Promise<void>;
  /** Frees the binding. Idempotent. */
  release(input: {
    readonly scope: RuntimeResourceScope;
    readonly fence: RuntimeResourceFence;
    readonly binding: CredentialEgressBinding;
  }): Promise<void>;
}
