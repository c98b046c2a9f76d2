/**
 * Destroying a container drops its connections at once, as on Cloudflare: a response the Durable Object
 * is still reading from the container (a process log stream, an exec) fails with "Network connection
 * lost." the moment `destroy()` is called, before anything else the container might still send (the
 * local container server would otherwise report the exit of every process it kills first).
 */
import type { LocalContainerRuntime } from "@open-managed-agents/local-container/containers-shim";

/** The error workerd reports for a container connection that went away. */
const CONNECTION_LOST = "Network connection lost.";

/** Wraps a container's runtime so that `destroy()` first fails every response body still being read. */
export function withConnectionsDroppedOnDestroy(
  runtime: LocalContainerRuntime,
): LocalContainerRuntime {
  const open = new Set<() => void>();
  const dropping = Object.create(runtime) as LocalContainerRuntime;
  Object.defineProperty(dropping, "getTcpPort", {
    value: (port: number) => {
      const tcp = runtime.getTcpPort(port);
      return {
        async fetch(
          input: string | URL | Request,
          init?: RequestInit | Request,
        ): Promise<Response> {
          const response = await tcp.fetch(input, init);
          if (response.body === null || response.webSocket !== null) return response;
          const reader = response.body.getReader();
          let drop = (): void => undefined;
          const body = new ReadableStream<Uint8Array>({
            start(controller) {
              drop = () => {
                open.delete(drop);
                controller.error(new Error(CONNECTION_LOST));
                void reader.cancel().catch(() => undefined);
              };
              open.add(drop);
            },
            async pull(controller) {
              try {
                const { done, value } = await reader.read();
                if (done) {
                  open.delete(drop);
                  controller.close();
                } else controller.enqueue(value);
              } catch (error) {
                // Already dropped: the stream carries the connection error.
                if (open.has(drop)) controller.error(error);
              }
            },
            cancel(reason) {
              open.delete(drop);
              return reader.cancel(reason);
            },
          });
          return new Response(body, response);
        },
      };
    },
  });
  Object.defineProperty(dropping, "destroy", {
    value: async () => {
      for (const drop of [...open]) drop();
      return runtime.destroy();
    },
  });
  return dropping;
}
