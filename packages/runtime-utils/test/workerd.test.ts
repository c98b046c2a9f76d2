import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, expect, it } from "vitest";
import { WORKER_BUNDLE_OPTIONS } from "../../../scripts/worker-bundle-options.mjs";

// The `.` and `./http` entries run inside workerd as a plain Worker (no Node compatibility flag): a Node
// builtin anywhere in them would stay an import of the bundle and fail the load.
let miniflare: Miniflare;
let bundleImports: string[] = [];

beforeAll(async () => {
  const entryPoints = [fileURLToPath(new URL("./support/helpers-worker.ts", import.meta.url))];
  // The repository's Worker bundle options, with Node builtins left as imports the check below would see.
  const bundle = await build({
    ...WORKER_BUNDLE_OPTIONS,
    entryPoints,
    sourcemap: false,
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  bundleImports = Object.values(bundle.metafile?.outputs ?? {}).flatMap((output) =>
    output.imports.map((entry) => entry.path),
  );
  miniflare = new Miniflare({
    modules: true,
    script: bundle.outputFiles?.[0]?.text ?? "",
    compatibilityDate: "2026-04-01",
  });
  await miniflare.ready;
});
afterAll(async () => {
  await miniflare?.dispose();
});

it("bundles for a plain Worker with no import left over", () => {
  expect(bundleImports).toEqual([]);
});

it("runs deadlines, bounded reads, hashing, stable JSON, bearer checks and routing in workerd", async () => {
  const response = await miniflare.dispatchFetch("http://utils.test/", {
    method: "POST",
    body: "abcdefgh",
  });
  expect(await response.json()).toEqual({
    sha256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    stable: '{"a":2,"b":1}',
    timeoutCode: "timeout",
    body: [97, 98, 99, 100],
    bearer: [true, false],
    route: "matched",
  });
});
