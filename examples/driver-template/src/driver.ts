import { join } from "node:path";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { createProviderManagedRuntimeDriver } from "@open-managed-agents/managed-runtime-sandbox";
import type { ManagedRuntimeProviderDriverPort } from "@open-managed-agents/runtime-resource-contract";
import { createLocalSubprocessSandboxProvider } from "@open-managed-agents/local-confinement/local-subprocess";
import {
  TEMPLATE_PROVIDER,
  type TemplateDriverOptions,
  parseTemplateDriverOptions,
} from "./options.js";

/**
 * The driver: a `SandboxProviderPort` composed into the managed-runtime ports. Replace the
 * local-subprocess provider with one over your sandbox service; the composition, the descriptor and
 * the loader entry stay as they are.
 */
export function createTemplateManagedRuntime(
  options: TemplateDriverOptions,
): ManagedRuntimeProviderDriverPort {
  const settings = parseTemplateDriverOptions(options);
  // Stand-in for a real sandbox service: local processes, each runtime confined with bubblewrap.
  const provider = createLocalSubprocessSandboxProvider({
    rootDir: join(settings.rootDir, "runtimes"),
    provider: TEMPLATE_PROVIDER,
  });
  return createProviderManagedRuntimeDriver({
    specificationVersion: "v1",
    version: "0.0.0",
    placements: ["in_process"],
    composition: {
      providerName: TEMPLATE_PROVIDER,
      provider,
      context: (scope) => ({ sessionId: scope.sessionId, workdir: "/workspace" }),
      leaseTtlMs: settings.leaseTtlMs,
      sandboxCapabilities: {
        suspendResume: "unsupported",
        hardTerminate: "supported",
        runtimeCheckpoints: [],
      },
      workspace: { strategies: ["checkpoint_restore"] },
      outputs: {
        store:
          settings.outputStore ?? createFsBlobStore({ rootDir: join(settings.rootDir, "outputs") }),
        keyPrefix: "driver-template-outputs",
      },
      drivers: ["ama_worker", "openma_supervised"],
    },
  });
}
