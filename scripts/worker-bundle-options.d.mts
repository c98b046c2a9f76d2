import type { BuildOptions } from "esbuild";

/** The esbuild options every Worker bundle of the repository shares (see worker-bundle-options.mjs). */
export declare const WORKER_BUNDLE_OPTIONS: Readonly<BuildOptions>;
