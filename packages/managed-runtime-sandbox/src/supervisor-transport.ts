import {
  type HarnessSupervisorTransportPort,
  createNdjsonSupervisorChannel,
} from "@open-managed-agents/runtime-resource-contract";
import type { ManagedSandboxRuntime } from "@open-managed-agents/sandbox";
import { throwIfAborted } from "./abort.js";
import { processSpec } from "./harness-driver.js";
import { onAbort, stopProcessUnlessLeaseLost } from "./process-control.js";
import { drainStream } from "./process-output.js";
import { type RuntimeRegistry, providerFailure } from "./runtime-registry.js";

/** Dependencies of {@link createDuplexSupervisorTransport}. */
export interface DuplexSupervisorTransportDependencies<R extends ManagedSandboxRuntime> {
  readonly registry: RuntimeRegistry<R>;
}

/**
 * Opens supervisor channels over a duplex process: NDJSON commands on its stdin, NDJSON events from its
 * stdout (the contract's codec validates both). stderr is drained so the process never blocks on it.
 * Closing the channel, or the open signal firing, stops the process.
 */
export function createDuplexSupervisorTransport<R extends ManagedSandboxRuntime>(
  dependencies: DuplexSupervisorTransportDependencies<R>,
): HarnessSupervisorTransportPort {
  const { registry } = dependencies;
  return {
    async open({ scope, sandbox, process: declaration, environmentSetup, signal }) {
      throwIfAborted(signal, "supervisor open");
      const runtime = await registry.resolve(scope, registry.ownLease(sandbox));
      let process;
      try {
        process = await runtime.spawnDuplexProcess(processSpec(declaration, environmentSetup));
      } catch (error) {
        throw providerFailure(
          error,
          `starting the supervisor process ${declaration.command} failed`,
        );
      }
      const started = process;
      void drainStream(started.stderr, () => undefined).catch(() => undefined);
      let stopping: Promise<void> | null = null;
      const stop = (): Promise<void> => {
        stopping ??= stopProcessUnlessLeaseLost(started, signal).then(() => undefined);
        return stopping;
      };
      const detach = onAbort(signal, () => void stop());
      return createNdjsonSupervisorChannel({
        stdin: started.stdin,
        stdout: started.stdout,
        close: async () => {
          detach();
          await stop();
        },
      });
    },
  };
}
