import type { Options } from "tsup";

/**
 * The build every published library shares: ESM with declarations and source maps, for ES2022.
 * A package's tsup.config.ts is one call: `export default libraryConfig({ index: "src/index.ts" })`,
 * with `overrides` for what it does differently (extra externals, declarations for fewer entries).
 */
export function libraryConfig(entry: Record<string, string>, overrides: Options = {}): Options {
  return {
    entry,
    format: ["esm"],
    dts: true,
    sourcemap: true,
    clean: true,
    target: "es2022",
    ...overrides,
  };
}

/** A benchmark's build: one ESM file per entry under node_modules/.bench, which the package's `bench` script runs. */
export function benchConfig(entry: Record<string, string>, overrides: Options = {}): Options {
  return {
    entry,
    format: ["esm"],
    target: "es2022",
    platform: "node",
    outDir: "node_modules/.bench",
    silent: true,
    ...overrides,
  };
}
