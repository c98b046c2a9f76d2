import {
  ManagedRuntimeError,
  UnavailableError,
} from "@open-managed-agents/runtime-resource-contract";
import type { BridgeClient, BridgeExecEvent } from "../wire/bridge-client.js";

/** Checks the container runtime behind the bridge: why it is down, or null when it answers. */
export type ContainerRuntimeCheck = (signal?: AbortSignal) => Promise<string | null>;

/**
 * Wraps a client so that a call failing as the sandbox's own (`sandbox_failed`: the bridge's "pool error:
 * Failed to start container", an exec stream's "HTTP error! status: 500") is checked against the container
 * runtime: when `check` finds it down, the error becomes `unavailable` naming the runtime, with the bridge's
 * answer as its cause and the bridge's code in its context; otherwise the call's own error stands. The check goes to the runtime itself, never through
 * the bridge, so it starts no container (asking the bridge would: its pool starts one to answer, and a start
 * asked while the runtime is down is carried out once it is back, after the sandbox was destroyed).
 */
export function createRuntimeCheckingClient(
  client: BridgeClient,
  check: ContainerRuntimeCheck,
): BridgeClient {
  /** The error to throw for `error`. Never throws itself: a failing check leaves the call's error. */
  const explain = async (operation: string, error: unknown): Promise<unknown> => {
    if (!ManagedRuntimeError.isInstance(error) || error.code !== "sandbox_failed") return error;
    let down: string | null;
    try {
      down = await check();
    } catch {
      return error;
    }
    if (down === null) return error;
    const code = (error.context as { bridgeCode?: unknown } | undefined)?.bridgeCode;
    const bridgeCode = typeof code === "string" ? code : null;
    // The bridge's own words stay in `cause` only: they blame the sandbox or a platform update.
    return new UnavailableError({
      message: `bridge ${operation} failed: the container runtime behind the bridge is unavailable: ${down}`,
      context: { operation, service: "container_runtime", bridgeCode },
      cause: error,
    });
  };

  const checked = async <T>(operation: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      throw await explain(operation, error);
    }
  };

  return {
    create: (signal) => client.create(signal),
    running: (id, signal) => checked("running", () => client.running(id, signal)),
    async *exec(id, input): AsyncGenerator<BridgeExecEvent> {
      try {
        yield* client.exec(id, input);
      } catch (error) {
        throw await explain("exec", error);
      }
    },
    readFile: (id, path, signal) => checked("file.read", () => client.readFile(id, path, signal)),
    writeFile: (id, path, body, signal) =>
      checked("file.write", () => client.writeFile(id, path, body, signal)),
    persist: (id, excludes, signal) =>
      checked("persist", () => client.persist(id, excludes, signal)),
    hydrate: (id, tar, signal) => checked("hydrate", () => client.hydrate(id, tar, signal)),
    destroy: (id) => checked("delete", () => client.destroy(id)),
  };
}
