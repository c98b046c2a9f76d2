import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { CapabilityUnsupportedError } from "@open-managed-agents/runtime-resource-contract";

const WRAPPER_NAME = "workerd-named-env.sh";

/** The workerd binary Miniflare itself would run. */
function miniflareWorkerdBinary(): string {
  const fromMiniflare = createRequire(createRequire(import.meta.url).resolve("miniflare"));
  const workerd = fromMiniflare("workerd") as { default?: string } | string;
  return typeof workerd === "string" ? workerd : (workerd.default as string);
}

/**
 * Makes Miniflare start workerd through a wrapper that hands it a named environment. Miniflare spawns
 * workerd with this process's whole environment, which in an environment worker holds its environment
 * key and perhaps an API key; it reads `MINIFLARE_WORKERD_PATH` at each spawn, so that variable now names
 * the wrapper, and `OMA_WORKERD_BINARY` the binary it would have run (one given in
 * `MINIFLARE_WORKERD_PATH` before stays the binary). Idempotent; every Miniflare of this process is affected.
 */
export function useNamedWorkerdEnvironment(): void {
  const wrapper = fileURLToPath(new URL(`./${WRAPPER_NAME}`, import.meta.url));
  const current = process.env.MINIFLARE_WORKERD_PATH;
  if (current === wrapper) return;
  if (!existsSync(wrapper)) {
    throw new CapabilityUnsupportedError({
      message: `the workerd launcher ${WRAPPER_NAME} is missing next to the package's build (${wrapper}); rebuild @open-managed-agents/local-container`,
      context: { path: wrapper },
    });
  }
  process.env.OMA_WORKERD_BINARY = current ?? miniflareWorkerdBinary();
  process.env.MINIFLARE_WORKERD_PATH = wrapper;
}
