export {
  type CredentialEgressOutboundOptions,
  type OutboundHandler,
  type OutboundHandlerContext,
  type OutboundInterceptingClass,
  createCredentialEgressOutboundHandlers,
  denyAllOutbound,
  installCredentialEgress,
} from "./worker/outbound-handlers.js";
export {
  CREDENTIAL_EGRESS_HANDLER,
  REVOKED_EGRESS_HANDLER,
  type CredentialEgressParams,
} from "./egress/outbound-names.js";
export type {
  CloudflareCredentialVault,
  CredentialVaultDecision,
} from "./egress/credential-vault.js";
