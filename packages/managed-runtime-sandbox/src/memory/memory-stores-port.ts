import {
  CapabilityUnsupportedError,
  InvalidRequestError,
  type MemoryStoreMode,
  type MemoryStoresPort,
  type MemoryStoreSyncReport,
} from "@open-managed-agents/runtime-resource-contract";
import type { ManagedSandboxRuntime, SandboxMemoryMountPort } from "@open-managed-agents/sandbox";
import { createBoundedCache } from "../bounded-cache.js";
import type { RuntimeRegistry } from "../runtime-registry.js";
import { type MemoryFileSync, createMemoryFileSync } from "./memory-file-sync.js";

/** Runtimes whose file-sync baselines one process keeps; a later lease of the same runtime re-mounts anyway. */
const PROJECTION_CAPACITY = 256;

const NOTHING_WRITTEN: MemoryStoreSyncReport = {
  created: 0,
  updated: 0,
  deleted: 0,
  readOnlyChanges: 0,
  conflicts: [],
};

const canMount = (
  runtime: ManagedSandboxRuntime,
): runtime is ManagedSandboxRuntime & SandboxMemoryMountPort =>
  typeof (runtime as Partial<SandboxMemoryMountPort>).mountMemoryStore === "function";

/**
 * The composition's {@link MemoryStoresPort}. `mount` calls the runtime's own `mountMemoryStore` (a
 * filesystem mount; synchronisation has nothing to write). `file_sync` projects each store with
 * {@link createMemoryFileSync} over the runtime's `exec`/`readFile`/`writeFile` and writes changes back
 * through the control plane's memory access at each synchronisation.
 */
export function createProviderMemoryStoresPort<R extends ManagedSandboxRuntime>(dependencies: {
  readonly registry: RuntimeRegistry<R>;
  readonly mode: MemoryStoreMode;
}): MemoryStoresPort {
  const { registry, mode } = dependencies;
  const projections = createBoundedCache<MemoryFileSync>(PROJECTION_CAPACITY);
  return {
    mode,
    async mount({ scope, sandbox, stores, memories }) {
      const runtime = await registry.resolve(scope, registry.ownLease(sandbox));
      if (mode === "mount") {
        if (!canMount(runtime)) {
          throw new CapabilityUnsupportedError({
            message: `${sandbox.provider} runtimes cannot mount memory stores`,
            context: { requirement: "memory_stores" },
          });
        }
        for (const store of stores) await runtime.mountMemoryStore(store);
        return;
      }
      if (!memories) {
        throw new CapabilityUnsupportedError({
          message: "file-sync memory stores need the control plane's memory access",
          context: { requirement: "memory_stores" },
        });
      }
      const projection = createMemoryFileSync({ sandbox: runtime, memories });
      for (const store of stores) await projection.mountMemoryStore(store);
      projections.set(sandbox.runtimeId, projection);
    },
    async synchronize({ sandbox, signal }) {
      registry.ownLease(sandbox);
      if (mode === "mount") return NOTHING_WRITTEN;
      const projection = projections.get(sandbox.runtimeId);
      if (!projection) {
        throw new InvalidRequestError({
          message: "no memory stores were projected into this runtime by this process",
          context: { runtimeId: sandbox.runtimeId },
        });
      }
      return projection.synchronizeMemoryStores({ signal });
    },
  };
}
