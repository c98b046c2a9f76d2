import type { EnvironmentPackages } from "@open-managed-agents/runtime-resource-contract";
import { ENVIRONMENT_PACKAGE_MANAGERS } from "@open-managed-agents/runtime-resource-contract";
import { sha256Hex } from "@open-managed-agents/runtime-utils";

/** Bumped when the install layout changes, so old markers stop matching. */
const LAYOUT_VERSION = 1;

/**
 * The setup fingerprint both markers carry: the packages (per manager, in order), the catalog image
 * alias when one is selected, the tool root and the layout version. SHA-256 through Web Crypto, so it
 * runs in Workers and Node alike.
 */
export async function setupFingerprint(
  packages: EnvironmentPackages,
  imageAlias: string | null,
  toolRoot: string,
): Promise<string> {
  const canonical = JSON.stringify({
    v: LAYOUT_VERSION,
    image: imageAlias,
    toolRoot,
    packages: ENVIRONMENT_PACKAGE_MANAGERS.map((manager) => [manager, packages[manager] ?? []]),
  });
  return sha256Hex(canonical);
}

/**
 * Content of the warm marker. It also names the runtime: `/tmp` belongs to one container, and a runtime
 * that shares `/tmp` with another (a host directory) must not take the other's setup for its own.
 */
export function warmMarker(fingerprint: string, runtimeId: string | null): string {
  return `${fingerprint} ${runtimeId ?? "-"}\n`;
}

/** Content of the restored marker: only the fingerprint, since it must match in a new runtime. */
export function restoredMarker(fingerprint: string): string {
  return `${fingerprint}\n`;
}
