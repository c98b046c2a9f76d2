// Bundles the Worker (src/index.ts) for workerd as `wrangler deploy` would, without building the container
// image (that needs Docker). `pnpm build` writes dist/index.js: proof that the Worker and the real
// `@cloudflare/containers` bundle together.
import { builtinModules } from "node:module";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { WORKER_BUNDLE_OPTIONS } from "../../../scripts/worker-bundle-options.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const bareBuiltins = new RegExp(
  `^(${builtinModules.map((name) => name.replace(/[/]/g, "\\/")).join("|")})$`,
);

/** With `nodejs_compat`, a bare Node builtin (`crypto`) is the `node:` module, as wrangler resolves it. */
const nodeBuiltins = {
  name: "node-builtins",
  setup(builder) {
    builder.onResolve({ filter: bareBuiltins }, (args) => ({
      path: `node:${args.path}`,
      external: true,
    }));
  },
};

await build({
  ...WORKER_BUNDLE_OPTIONS,
  entryPoints: [`${root}src/index.ts`],
  outfile: `${root}dist/index.js`,
  plugins: [nodeBuiltins],
  logLevel: "warning",
});
