// Bundles the bridge Worker for local workerd, with `@cloudflare/containers` replaced by the built shim.
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const shim = `${root}dist/containers-shim.js`;

/** Sends every import of `@cloudflare/containers` to the shim, which already holds the real code. */
const containersShim = {
  name: "containers-shim",
  setup(builder) {
    builder.onResolve({ filter: /^@cloudflare\/containers$/ }, () => ({ path: shim }));
  },
};

await build({
  entryPoints: [`${root}src/worker/bridge-worker.ts`],
  outfile: `${root}dist/worker/bridge-worker.js`,
  bundle: true,
  format: "esm",
  platform: "neutral",
  target: "es2022",
  conditions: ["workerd", "worker", "browser", "import"],
  mainFields: ["module", "main"],
  external: ["cloudflare:*", "node:*"],
  plugins: [containersShim],
  sourcemap: true,
  logLevel: "warning",
});
