import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { defineManagedRuntimeConformanceSuite } from "@open-managed-agents/managed-runtime-conformance/vitest";
import { createLocalSubprocessSandboxProvider } from "@open-managed-agents/local-confinement/local-subprocess";
import { createProviderManagedRuntimeDriver } from "../src/index.js";

// The composition over the local-subprocess provider (confined with bubblewrap): real processes and files.
const provider = createLocalSubprocessSandboxProvider({
  rootDir: mkdtempSync(join(tmpdir(), "oma-mrs-conformance-")),
});

defineManagedRuntimeConformanceSuite({
  name: "provider composition over local-subprocess",
  driver: createProviderManagedRuntimeDriver({
    specificationVersion: "v1",
    version: "0.1.0",
    placements: ["in_process"],
    composition: {
      providerName: provider.provider,
      provider,
      context: (scope) => ({ sessionId: scope.sessionId, workdir: "/workspace" }),
      leaseTtlMs: 30_000,
      sandboxCapabilities: {
        suspendResume: "unsupported",
        hardTerminate: "supported",
        runtimeCheckpoints: [],
      },
      workspace: { strategies: ["checkpoint_restore"] },
      outputs: { store: createMemoryBlobStore(), keyPrefix: "conformance-outputs" },
      drivers: ["ama_worker", "openma_supervised"],
    },
  }),
});
