import * as z from "zod";

/** Outbound handler that injects vault credentials for an attached egress binding. */
export const CREDENTIAL_EGRESS_HANDLER = "omaCredentialEgress";
/** Outbound handler selected once a binding is revoked: refuses everything. */
export const REVOKED_EGRESS_HANDLER = "omaCredentialEgressRevoked";

/**
 * Params the driver hands the container's Durable Object for {@link CREDENTIAL_EGRESS_HANDLER}. The
 * Durable Object stores them; they hold an opaque binding id and an origin, never a credential.
 */
export const credentialEgressParamsSchema = z
  .object({
    bindingId: z.string().min(1).max(200),
    controlPlaneOrigin: z.string().nullable(),
  })
  .strict();

/** Params of {@link CREDENTIAL_EGRESS_HANDLER}. */
export type CredentialEgressParams = z.infer<typeof credentialEgressParamsSchema>;
