// Bundles the Worker (src/index.ts) for workerd the way `wrangler deploy` does, without the container
// image build that needs Docker. `pnpm build` writes dist/index.js; the tests reuse bundleWorker with the
// container runtime swapped for the local one.
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { WORKER_BUNDLE_OPTIONS } from "../../../scripts/worker-bundle-options.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));

/** Bundles src/index.ts into `outfile`; `plugins` may redirect modules (the tests replace @cloudflare/containers). */
export async function bundleWorker(outfile, plugins = []) {
  await build({
    ...WORKER_BUNDLE_OPTIONS,
    entryPoints: [`${root}src/index.ts`],
    outfile,
    plugins,
    logLevel: "error",
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await bundleWorker(`${root}dist/index.js`);
}
