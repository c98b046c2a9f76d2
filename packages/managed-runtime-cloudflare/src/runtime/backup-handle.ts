import {
  InvalidRequestError,
  ProviderMismatchError,
  type SandboxCheckpointHandle,
} from "@open-managed-agents/runtime-resource-contract";
import { CLOUDFLARE_PROVIDER } from "../provider-id.js";
import type { CloudflareBackupHandle } from "../sandbox/cloudflare-sandbox.js";

/** The checkpoint handle of a backup: portable, filesystem, with the backup's directory in metadata. */
export function backupCheckpointHandle(
  backup: CloudflareBackupHandle,
  sourceRuntimeId: string,
): SandboxCheckpointHandle {
  return {
    provider: CLOUDFLARE_PROVIDER,
    checkpointId: backup.id,
    sourceRuntimeId,
    kind: "filesystem",
    scope: "portable",
    metadata: { dir: backup.dir, localBucket: backup.localBucket === true },
  };
}

/** The backup a checkpoint handle names. Throws `provider_mismatch` for a foreign handle and `invalid_request` for a malformed one. */
export function backupFromCheckpointHandle(
  handle: SandboxCheckpointHandle,
): CloudflareBackupHandle {
  if (handle.provider !== CLOUDFLARE_PROVIDER) {
    throw new ProviderMismatchError({
      message: `checkpoint belongs to provider "${handle.provider}", not "${CLOUDFLARE_PROVIDER}"`,
      context: { expected: CLOUDFLARE_PROVIDER, actual: handle.provider },
    });
  }
  const dir = handle.metadata?.dir;
  if (
    handle.kind !== "filesystem" ||
    handle.scope !== "portable" ||
    typeof dir !== "string" ||
    dir === ""
  ) {
    throw new InvalidRequestError({
      message: `checkpoint ${handle.checkpointId} is not a portable filesystem backup of this driver`,
      context: { kind: handle.kind, scope: handle.scope },
    });
  }
  return {
    id: handle.checkpointId,
    dir,
    ...(handle.metadata?.localBucket === true ? { localBucket: true } : {}),
  };
}
