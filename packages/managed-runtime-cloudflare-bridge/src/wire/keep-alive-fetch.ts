import { Agent, fetch as undiciFetch } from "undici";

/**
 * How long the driver keeps an idle connection to the bridge for reuse. A server that closes an idle
 * connection while a client writes a request on it resets that request (workerd closes after 5 s, and
 * Node's fetch kept connections 4 s, give or take a one-second timer tick: under load the two met and exec
 * calls failed with ECONNRESET). Well under any server's idle timeout, the driver always closes first.
 */
export const BRIDGE_IDLE_CONNECTION_MS = 2_000;

let agent: Agent | undefined;

/** The fetch the bridge client uses unless given one: one connection pool per process, idle connections closed after {@link BRIDGE_IDLE_CONNECTION_MS}. */
export function bridgeFetch(): typeof fetch {
  agent ??= new Agent({ keepAliveTimeout: BRIDGE_IDLE_CONNECTION_MS, keepAliveMaxTimeout: BRIDGE_IDLE_CONNECTION_MS });
  const dispatcher = agent;
  return ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher })) as unknown as typeof fetch;
}
