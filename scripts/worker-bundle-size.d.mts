/** The Worker bundle `wrangler deploy` would upload: its size raw and gzip-compressed, and esbuild's warnings. */
export interface WorkerBundleSize {
  readonly bytes: number;
  readonly gzipBytes: number;
  readonly warnings: readonly string[];
}

/**
 * Bundles the Worker of `appDir` with `wrangler deploy --dry-run --outdir` and measures it. `wrangler`: the
 * binary to run (default: the app's `node_modules/.bin/wrangler`, else the one on PATH).
 */
export function measureWorkerBundle(
  appDir: string,
  options?: { readonly wrangler?: string },
): Promise<WorkerBundleSize>;
