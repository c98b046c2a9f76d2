/**
 * A destroy that fails, for the orphan tests: the container runtime of an armed container throws from
 * `destroy()` and leaves the container running on the local container server, as a Cloudflare container
 * whose stop request is lost does. The `Sandbox` Durable Objects run in the test's isolate, so arming here
 * reaches them. Only armed containers are affected, and only for the number of destroys armed.
 */
import type { LocalContainerRuntime } from "@open-managed-agents/local-container/containers-shim";

/** The message an armed destroy throws. */
export const DESTROY_FAULT_MESSAGE =
  "the container runtime did not stop the container (injected destroy fault)";

const armed = new Map<string, number>();

/** Makes the next `count` destroys of a container (its `Sandbox` Durable Object id) throw. */
export function failNextDestroys(containerId: string, count = 1): void {
  armed.set(containerId, count);
}

/** Wraps a container's runtime so that armed destroys throw; everything else is the runtime's own. */
export function withDestroyFaults(
  runtime: LocalContainerRuntime,
  containerId: string,
): LocalContainerRuntime {
  // Delegates every member to the runtime (its `running` getter included) except `destroy`.
  const faulty = Object.create(runtime) as LocalContainerRuntime;
  Object.defineProperty(faulty, "destroy", {
    value: async () => {
      const left = armed.get(containerId) ?? 0;
      if (left > 0) {
        if (left === 1) armed.delete(containerId);
        else armed.set(containerId, left - 1);
        throw new Error(DESTROY_FAULT_MESSAGE);
      }
      return runtime.destroy();
    },
  });
  return faulty;
}
