// Bundles the bridge Worker for local workerd, with `@cloudflare/containers` replaced by the built shim,
// and puts the workerd launcher beside the build.
import { chmod, copyFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { WORKER_BUNDLE_OPTIONS } from "../../../scripts/worker-bundle-options.mjs";

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
  ...WORKER_BUNDLE_OPTIONS,
  entryPoints: [`${root}src/worker/bridge-worker.ts`],
  outfile: `${root}dist/worker/bridge-worker.js`,
  plugins: [containersShim],
  logLevel: "warning",
});

// The launcher starts workerd through this wrapper (named environment); it sits next to the built index.
await copyFile(`${root}src/launcher/workerd-named-env.sh`, `${root}dist/workerd-named-env.sh`);
await chmod(`${root}dist/workerd-named-env.sh`, 0o755);
