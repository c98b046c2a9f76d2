import { accessSync, constants } from "node:fs";
import { join } from "node:path";
import { CapabilityUnsupportedError } from "@open-managed-agents/runtime-resource-contract";

/** Version of the `@cloudflare/sandbox` image whose container this server stands in for. */
export const SANDBOX_IMAGE_VERSION = "0.12.10";

/**
 * Variables the default `cloudflare/sandbox:0.12.10` image sets with `ENV` (its runtime stage and the
 * default variant), which every process of that container inherits. The session shell adds `LANG` and
 * `LC_ALL` (`C.UTF-8`) as the published control server does.
 */
export const IMAGE_ENV: Readonly<Record<string, string>> = {
  PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  DEBIAN_FRONTEND: "noninteractive",
  SANDBOX_VERSION: SANDBOX_IMAGE_VERSION,
  PYTHON_POOL_MIN_SIZE: "0",
  JAVASCRIPT_POOL_MIN_SIZE: "3",
  TYPESCRIPT_POOL_MIN_SIZE: "3",
};

/** Where bootstrap installs tools the image ships that a host may lack (`bun`); first on the container's PATH. */
export const TOOLS_BIN = "/opt/open-managed-agents/bun/bin";

/** The container's PATH: the tools directory, the image's PATH, then the host's other entries (the root is the host's system). */
export function containerSearchPath(hostPath: string | undefined, toolsBin = TOOLS_BIN): string {
  const entries = [
    toolsBin,
    ...(IMAGE_ENV.PATH as string).split(":"),
    ...(hostPath ?? "").split(":"),
  ].filter((entry) => entry.startsWith("/"));
  return [...new Set(entries)].join(":");
}

/** Where `bun` is on the container's PATH, or undefined. */
export function findContainerBun(
  hostPath: string | undefined,
  toolsBin = TOOLS_BIN,
): string | undefined {
  for (const directory of containerSearchPath(hostPath, toolsBin).split(":")) {
    try {
      accessSync(join(directory, "bun"), constants.X_OK);
      return join(directory, "bun");
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/** Throws `capability_unsupported` naming what to install when the containers would have no `bun`. */
export function assertBunAvailable(hostPath: string | undefined, toolsBin = TOOLS_BIN): void {
  if (findContainerBun(hostPath, toolsBin) !== undefined) return;
  throw new CapabilityUnsupportedError({
    message: `bun is not on the local containers' PATH (the sandbox image has it); run scripts/bootstrap.sh, or as root: npm install --prefix ${toolsBin.replace(/\/bin$/, "")} bun@1.3.14 && ln -s ../node_modules/bun/bin/bun.exe ${toolsBin}/bun`,
    context: { tool: "bun", directory: toolsBin },
  });
}
