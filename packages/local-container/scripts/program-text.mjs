// Programs that run inside a container are TypeScript files of their own (src/programs/), imported by the
// server as text with a `?program` suffix: the build bundles each into one CommonJS program for
// `node -e`, and the server holds that text. The same bundle serves tsup (an esbuild plugin) and vitest
// (a vite plugin), so the tests run the program the package ships.
import { dirname, resolve } from "node:path";
import { build } from "esbuild";

const SUFFIX = "?program";
const VIRTUAL = "\0program-text:";

/** Bundles the program at `entry` (Node builtins stay imports) into one CommonJS text. */
export async function bundleProgram(entry) {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    platform: "node",
    format: "cjs",
    target: "node20",
    // `/*!` comments stay: a program may mark itself so its process can be found by its text.
    legalComments: "inline",
    logLevel: "warning",
  });
  return result.outputFiles[0].text;
}

const moduleOf = (text) => `export default ${JSON.stringify(text)};\n`;

/** For tsup's `esbuildPlugins`. */
export function programTextEsbuildPlugin() {
  return {
    name: "program-text",
    setup(builder) {
      builder.onResolve({ filter: /\?program$/ }, (args) => ({
        path: resolve(args.resolveDir, args.path.slice(0, -SUFFIX.length)),
        namespace: "program-text",
      }));
      builder.onLoad({ filter: /.*/, namespace: "program-text" }, async (args) => ({
        contents: moduleOf(await bundleProgram(args.path)),
        loader: "js",
      }));
    },
  };
}

/** For vitest's `plugins`. */
export function programTextVitePlugin() {
  return {
    name: "program-text",
    enforce: "pre",
    resolveId(source, importer) {
      if (!source.endsWith(SUFFIX) || importer === undefined) return null;
      return `${VIRTUAL}${resolve(dirname(importer.split("?")[0]), source.slice(0, -SUFFIX.length))}`;
    },
    async load(id) {
      if (!id.startsWith(VIRTUAL)) return null;
      return moduleOf(await bundleProgram(id.slice(VIRTUAL.length)));
    },
  };
}
