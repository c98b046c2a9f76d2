import { LeaseLostError } from "@open-managed-agents/runtime-resource-contract";
import type { BridgeClient, BridgeExecEvent } from "../wire/bridge-client.js";

/** Destroyed ids remembered; older ones are forgotten first. */
const DEFAULT_CAPACITY = 4096;

/**
 * Wraps a client so that nothing reaches the bridge for a sandbox this driver destroyed. The bridge
 * answers every call for a known id by starting a fresh, empty container, so a late exec, file read,
 * persist or hydrate after `destroy` (a checkpoint after the runtime was reaped, a heartbeat after a
 * terminate) would leave a container running and present it as the old runtime. Those calls fail
 * with `lease_lost` instead; `running` reports false; `destroy` stays idempotent.
 */
export function createTombstoningClient(client: BridgeClient, options: { readonly capacity?: number } = {}): BridgeClient {
  const capacity = options.capacity ?? DEFAULT_CAPACITY;
  const destroyed = new Set<string>();

  const remember = (id: string) => {
    destroyed.delete(id);
    destroyed.add(id);
    if (destroyed.size > capacity) destroyed.delete(destroyed.values().next().value as string);
  };
  const refuse = (id: string, operation: string) => {
    if (destroyed.has(id)) {
      throw new LeaseLostError({ message: `bridge sandbox was destroyed; ${operation} refused`, context: { runtimeId: id, operation } });
    }
  };

  return {
    create: (signal) => client.create(signal),
    async running(id, signal) {
      return destroyed.has(id) ? false : client.running(id, signal);
    },
    async *exec(id, input): AsyncGenerator<BridgeExecEvent> {
      refuse(id, "exec");
      yield* client.exec(id, input);
    },
    async readFile(id, path, signal) {
      refuse(id, "file read");
      return client.readFile(id, path, signal);
    },
    async writeFile(id, path, body, signal) {
      refuse(id, "file write");
      return client.writeFile(id, path, body, signal);
    },
    async persist(id, excludes, signal) {
      refuse(id, "persist");
      return client.persist(id, excludes, signal);
    },
    async hydrate(id, tar, signal) {
      refuse(id, "hydrate");
      return client.hydrate(id, tar, signal);
    },
    async destroy(id) {
      // Remembered before the request: a call racing the delete must not start a fresh container either.
      remember(id);
      await client.destroy(id);
    },
  };
}
