import { createKeepAliveFetch } from "@open-managed-agents/runtime-utils/node";

/**
 * How long the driver keeps an idle connection to the bridge for reuse. A server that closes an idle
 * connection while a client writes a request on it resets that request (workerd closes after 5 s, and
 * Node's fetch kept connections 4 s, give or take a one-second timer tick: under load the two met and exec
 * calls failed with ECONNRESET). Well under any server's idle timeout, the driver always closes first.
 */
export const BRIDGE_IDLE_CONNECTION_MS = 2_000;

let shared: typeof fetch | undefined;

/**
 * The fetch the bridge client uses unless given one: runtime-utils' keep-alive fetch on Node's own HTTP
 * client, one connection pool per process whose idle connections close after
 * {@link BRIDGE_IDLE_CONNECTION_MS}. Not Node's `fetch` (undici), whose WebAssembly HTTP parser V8 compiles
 * again with its optimizing compiler once a process is busy, a spike of memory on top of whatever a transfer
 * holds.
 */
export function bridgeFetch(): typeof fetch {
  shared ??= createKeepAliveFetch({ idleConnectionMs: BRIDGE_IDLE_CONNECTION_MS });
  return shared as typeof fetch;
}
