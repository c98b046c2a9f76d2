// Programs that run inside a container are TypeScript files of their own (a package's src/programs/),
// imported as text with a `?program` suffix: the build bundles each into one CommonJS program for
// `node -e`, and the package holds that text. The same bundle serves tsup (an esbuild plugin) and vitest
// (a vite plugin), so tests run the program the package ships. Each package brings its own esbuild.
import { dirname, resolve } from "node:path";

const SUFFIX = "?program";
const VIRTUAL = "\0program-text:";

/** Options of every program bundle: one CommonJS file, Node builtins left to `require`. */
export const PROGRAM_BUNDLE_OPTIONS = Object.freeze({
  bundle: true,
  write: false,
  platform: "node",
  format: "cjs",
  target: "node20",
  // `/*!` comments stay: a program may mark itself so its process can be found by its text.
  legalComments: "inline",
  logLevel: "warning",
});

/** Bundles the program at `entry` with esbuild's `build` into one CommonJS text. */
export async function bundleProgram(build, entry) {
  const result = await build({ ...PROGRAM_BUNDLE_OPTIONS, entryPoints: [entry] });
  return result.outputFiles[0].text;
}

const moduleOf = (text) => `export default ${JSON.stringify(text)};\n`;

/** For tsup's `esbuildPlugins`: bundles with the esbuild that runs the build. */
export function programTextEsbuildPlugin() {
  return {
    name: "program-text",
    setup(builder) {
      builder.onResolve({ filter: /\?program$/ }, (args) => ({
        path: resolve(args.resolveDir, args.path.slice(0, -SUFFIX.length)),
        namespace: "program-text",
      }));
      builder.onLoad({ filter: /.*/, namespace: "program-text" }, async (args) => ({
        contents: moduleOf(await bundleProgram(builder.esbuild.build, args.path)),
        loader: "js",
      }));
    },
  };
}

/** tsup options that inline a package's `.sh` programs as text. */
export function shellTextTsupOptions() {
  return { loader: { ".sh": "text" } };
}

/** tsup options that inline a package's programs: `.sh` files as text, `?program` imports bundled. */
export function programTextTsupOptions() {
  return { ...shellTextTsupOptions(), esbuildPlugins: [programTextEsbuildPlugin()] };
}

/** For vitest's `plugins`, given esbuild's `build`. */
export function programTextVitePlugin(build) {
  return {
    name: "program-text",
    enforce: "pre",
    resolveId(source, importer) {
      if (!source.endsWith(SUFFIX) || importer === undefined) return null;
      return `${VIRTUAL}${resolve(dirname(importer.split("?")[0]), source.slice(0, -SUFFIX.length))}`;
    },
    async load(id) {
      if (!id.startsWith(VIRTUAL)) return null;
      return moduleOf(await bundleProgram(build, id.slice(VIRTUAL.length)));
    },
  };
}

/** For vitest's `plugins`: a `.sh` file imports as its text, as tsup's `.sh` text loader does. */
export function shellTextVitePlugin() {
  return {
    name: "shell-text",
    transform: (code, id) => (id.endsWith(".sh") ? { code: moduleOf(code), map: null } : null),
  };
}
