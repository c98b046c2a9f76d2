import type { Plugin } from "esbuild";

/** Bundles src/index.ts into `outfile`; `plugins` may redirect modules. */
export function bundleWorker(outfile: string, plugins?: Plugin[]): Promise<void>;
