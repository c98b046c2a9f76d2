import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { formatDuration, say } from "./format.js";

/** Observes results of selected port calls (checkpoint candidates, output manifests). */
export type CallObserver = (call: string, result: unknown) => void;

/**
 * Wraps every method of a port so each call prints as one transaction step with its duration, in the
 * order the host makes them. Arguments and results are not printed: they may carry the fence token.
 */
export function instrument<T extends object>(name: string, port: T, observe?: CallObserver): T {
  return new Proxy(port, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function" || typeof property !== "string") return value;
      return async (...args: unknown[]) => {
        const started = performance.now();
        const call = `${name}.${property}`;
        try {
          const result = await (value as (...input: unknown[]) => unknown).apply(target, args);
          if (!["capabilities", "driverCapabilities", "heartbeat", "renew", "isCurrent"].includes(property)) {
            say(`  ${call.padEnd(28)}${formatDuration(performance.now() - started)}`);
          }
          observe?.(call, result);
          return result;
        } catch (error) {
          const code = ManagedRuntimeError.isInstance(error) ? error.code : "error";
          say(`  ${call.padEnd(28)}${formatDuration(performance.now() - started)}  failed: ${code}`);
          throw error;
        }
      };
    },
  });
}
