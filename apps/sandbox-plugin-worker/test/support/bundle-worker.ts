import { fileURLToPath } from "node:url";
import type { Plugin } from "esbuild";
import { bundleWorker } from "../../scripts/bundle.mjs";

const shimSource = fileURLToPath(new URL("./containers-shim.ts", import.meta.url));

/** Sends `@cloudflare/containers` to the test shim; the shim's own import of the local runtime bundle is left alone. */
const containersShim: Plugin = {
  name: "containers-shim",
  setup(builder) {
    builder.onResolve({ filter: /^@cloudflare\/containers$/ }, () => ({ path: shimSource }));
  },
};

/** Bundles the Worker for workerd with the container runtime replaced by the test shim. */
export function bundleTestWorker(outfile: string): Promise<void> {
  return bundleWorker(outfile, [containersShim]);
}
