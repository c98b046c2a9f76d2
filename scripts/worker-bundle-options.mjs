// The esbuild options every Worker bundle of the repository shares: a module Worker for workerd, as
// `wrangler deploy` resolves it (workerd conditions, `cloudflare:` and `node:` modules left to the
// runtime). Each bundle script adds its entry, output, plugins and log level.

/** @type {import("esbuild").BuildOptions} */
export const WORKER_BUNDLE_OPTIONS = Object.freeze({
  bundle: true,
  format: "esm",
  platform: "neutral",
  target: "es2022",
  conditions: ["workerd", "worker", "browser", "import"],
  mainFields: ["module", "main"],
  external: ["cloudflare:*", "node:*"],
  sourcemap: true,
});
