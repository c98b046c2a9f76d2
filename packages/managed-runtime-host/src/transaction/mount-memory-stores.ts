import type { RunContext } from "../host/run-context.js";
import { callPort } from "./port-call.js";
import type { RunStep } from "./step.js";

const stage = "memory-stores-mount";
const mounted = new WeakSet<RunContext>();

/**
 * Puts the run's memory stores at `/mnt/memory/<storeName>/` once the workspace, outputs and egress are
 * attached, before packages, session inputs and the harness. A failed mount fails the run at this stage.
 */
export const mountMemoryStores: RunStep = {
  stage,
  applies: (run) => run.memoryStores.length > 0,
  async run(run) {
    const port = run.options.memoryStores;
    const lease = run.lease;
    if (!port || !lease) return;
    const fence = run.requireFence();
    const memories = run.sessionInputAccess?.memories;
    await callPort(run, stage, (signal) =>
      port.mount({
        scope: run.scope,
        fence,
        sandbox: lease,
        stores: run.memoryStores,
        ...(memories ? { memories } : {}),
        signal,
      }),
    );
    mounted.add(run);
    run.log.info("memory_stores.mounted", {
      ...run.scope,
      mode: port.mode,
      stores: run.memoryStores.length,
      readOnly: run.memoryStores.filter((store) => store.readOnly).length,
    });
  },
};

/** True once the run's stores are in the sandbox. */
export function memoryStoresMounted(run: RunContext): boolean {
  return mounted.has(run);
}
