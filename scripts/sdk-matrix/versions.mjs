// The SDK versions the SDK-facing suites are proven against, one entry per run of a suite. `lowest` is
// `@anthropic-ai/sdk` as the packages declare and the lockfile pins it; `newest` is the alias
// `@anthropic-ai/sdk-newest` (`npm:@anthropic-ai/sdk@<newest 1.x>`), so proving a new release is a bump of
// that alias in the lockfile. OMA_TEST_SDK names the one a run uses; unset, it is `lowest`.
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** Each run's name and the package its `@anthropic-ai/sdk` imports resolve to. */
export const SDK_MATRIX = [
  { name: "lowest", packageName: "@anthropic-ai/sdk" },
  { name: "newest", packageName: "@anthropic-ai/sdk-newest" },
];

/** The matrix entry OMA_TEST_SDK names (`lowest` when unset); an unknown name throws. */
export function sdkUnderTest(env = process.env) {
  const name = env.OMA_TEST_SDK ?? "lowest";
  const entry = SDK_MATRIX.find((candidate) => candidate.name === name);
  if (!entry)
    throw new Error(
      `OMA_TEST_SDK=${name} names no SDK of the matrix (${SDK_MATRIX.map((candidate) => candidate.name).join(", ")})`,
    );
  return entry;
}

/** The version of `entry`'s package as installed for the package in `directory`. */
export function installedSdkVersion(entry, directory = process.cwd()) {
  return createRequire(join(directory, "package.json"))(`${entry.packageName}/version`).VERSION;
}

/** Root of the workspace. */
export const WORKSPACE_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The oma-ama-worker build whose bin bundles `entry`'s SDK (the package's own dist for `lowest`). */
export function amaWorkerBuild(entry) {
  return join(
    WORKSPACE_ROOT,
    "packages/ama-worker",
    entry.name === "lowest" ? "dist" : `sdk-${entry.name}`,
    "index.js",
  );
}
