import { LeaseLostError } from "@open-managed-agents/runtime-resource-contract";
import { createBoundedCache } from "./bounded-cache.js";

/** Destroyed sandbox ids a driver remembers; older ones are forgotten first. */
export const DEFAULT_DESTROYED_SANDBOXES = 4096;

/** The sandbox ids one driver destroyed: what it must never reach again. */
export interface DestroyedSandboxes {
  /** Records `sandboxId` as destroyed; call it before the destroy request, so a racing call is refused too. */
  remember(sandboxId: string): void;
  /** Whether `sandboxId` was destroyed by this driver (within the remembered ones). */
  has(sandboxId: string): boolean;
  /** Throws `lease_lost` naming `operation` when `sandboxId` was destroyed. */
  refuse(sandboxId: string, operation: string): void;
}

/**
 * A provider that starts a fresh, empty container for any call to a known sandbox id (the Cloudflare
 * `Sandbox` Durable Object, the Sandbox Bridge) would let a late call after destroy leave a container
 * running that nothing tracks. Drivers check this record before every call but the idempotent destroy.
 */
export function createDestroyedSandboxes(
  options: { readonly capacity?: number } = {},
): DestroyedSandboxes {
  const destroyed = createBoundedCache<true>(options.capacity ?? DEFAULT_DESTROYED_SANDBOXES);
  const has = (sandboxId: string) => destroyed.get(sandboxId) === true;
  return {
    remember: (sandboxId) => destroyed.set(sandboxId, true),
    has,
    refuse(sandboxId, operation) {
      if (has(sandboxId))
        throw new LeaseLostError({
          message: `sandbox ${sandboxId} was destroyed; ${operation} refused`,
          context: { runtimeId: sandboxId, operation },
        });
    },
  };
}
