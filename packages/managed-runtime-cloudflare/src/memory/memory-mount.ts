import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";
import type { SandboxMemoryMountPort } from "@open-managed-agents/sandbox";
import type { CloudflareSandbox } from "../sandbox/cloudflare-sandbox.js";

/** Where memory stores appear in the sandbox: `/mnt/memory/<storeName>`. */
export const MEMORY_MOUNT_ROOT = "/mnt/memory";

/** The R2 bucket behind memory-store mounts. Credentials stay in the Worker: the Sandbox DO reads them. */
export interface MemoryMountSettings {
  readonly bucketName: string;
  readonly endpoint: string;
}

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The R2 key prefix (s3fs form) of one memory store. */
export function memoryStorePrefix(storeId: string): string {
  return `/memory-stores/${storeId}/`;
}

/**
 * `mountMemoryStore` over the SDK's bucket mount (R2 through FUSE): the store's prefix of the memory
 * bucket at `/mnt/memory/<storeName>`, read-only when asked (the mount itself refuses writes).
 * Store names and ids are single path segments; anything else is `invalid_request` before the SDK is asked.
 */
export function createMemoryStoreMount(
  sandbox: CloudflareSandbox,
  settings: MemoryMountSettings,
): SandboxMemoryMountPort["mountMemoryStore"] {
  return async ({ storeName, storeId, readOnly }) => {
    for (const [field, value] of [
      ["storeName", storeName],
      ["storeId", storeId],
    ] as const) {
      if (!SEGMENT.test(value) || value === "." || value === "..") {
        throw new InvalidRequestError({
          message: `${field} must be one path segment of letters, digits, '.', '_' or '-'`,
          context: { path: field },
        });
      }
    }
    await sandbox.mountBucket({
      bucket: settings.bucketName,
      mountPath: `${MEMORY_MOUNT_ROOT}/${storeName}`,
      endpoint: settings.endpoint,
      prefix: memoryStorePrefix(storeId),
      readOnly,
    });
  };
}
