// `node --import <this file> …`: a Node process whose `@anthropic-ai/sdk` imports resolve to the SDK
// OMA_TEST_SDK names (versions.mjs), and whose `@open-managed-agents/ama-worker` is the build bundling it.
// With OMA_TEST_SDK unset or `lowest` it registers nothing.
import { register } from "node:module";
import { pathToFileURL } from "node:url";
import { amaWorkerBuild, sdkUnderTest } from "./versions.mjs";

const entry = sdkUnderTest();
if (entry.name !== "lowest") {
  register(new URL("./resolve-hooks.mjs", import.meta.url), {
    data: { packageName: entry.packageName, amaWorker: pathToFileURL(amaWorkerBuild(entry)).href },
  });
}
