import { fileURLToPath } from "node:url";
import { type Plugin, build } from "esbuild";

const root = fileURLToPath(new URL("../..", import.meta.url));
const shimSource = fileURLToPath(new URL("./containers-shim.ts", import.meta.url));

/** Sends `@cloudflare/containers` to the test shim; the shim's own import of the local runtime bundle is left alone. */
const containersShim: Plugin = {
  name: "containers-shim",
  setup(builder) {
    builder.onResolve({ filter: /^@cloudflare\/containers$/ }, () => ({ path: shimSource }));
  },
};

/** Bundles the Worker (src/index.ts) for workerd with the container runtime replaced by the test shim. */
export async function bundleTestWorker(outfile: string): Promise<void> {
  await build({
    entryPoints: [`${root}src/index.ts`],
    outfile,
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser", "import"],
    mainFields: ["module", "main"],
    external: ["cloudflare:*", "node:*"],
    plugins: [containersShim],
    logLevel: "error",
  });
}
