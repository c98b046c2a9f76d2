import type { Alias } from "vite";
import { amaWorkerBuild, sdkUnderTest } from "./scripts/sdk-matrix/versions.mjs";

/**
 * Vite aliases that make a suite run against the SDK OMA_TEST_SDK names (scripts/sdk-matrix/versions.mjs):
 * every `@anthropic-ai/sdk` import, in the tests and in the workspace packages they load, resolves to that
 * SDK's package, and `@open-managed-agents/ama-worker` to the build whose `oma-ama-worker` bundles it. No
 * aliases for the lowest SDK, the one the packages declare.
 */
export function sdkMatrixAliases(): Alias[] {
  const entry = sdkUnderTest();
  if (entry.name === "lowest") return [];
  return [
    { find: /^@anthropic-ai\/sdk(?=\/|$)/, replacement: entry.packageName },
    { find: /^@open-managed-agents\/ama-worker$/, replacement: amaWorkerBuild(entry) },
  ];
}
