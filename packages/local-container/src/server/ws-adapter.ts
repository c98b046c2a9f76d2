import type { IncomingMessage } from "node:http";
import { controlTokenHeaders } from "./control-token.js";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import * as z from "zod";
import { CONTAINER_ID_HEADER } from "../protocol.js";

/** Paths the SDK's `websocket` transport upgrades on. */
export const WEBSOCKET_PATHS: ReadonlySet<string> = new Set(["/ws", "/api/ws"]);

/** Bytes queued on a socket before streaming waits for the client to catch up. */
const SEND_HIGH_WATER = 4 * 1024 * 1024;

const clientMessageSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("request"),
    id: z.string().min(1).max(256),
    method: z.enum(["GET", "POST", "PUT", "DELETE"]),
    path: z.string().startsWith("/").max(4096),
    body: z.unknown().optional(),
    headers: z.record(z.string(), z.string()).optional(),
  }),
  z.object({ type: z.literal("cancel"), id: z.string().min(1).max(256) }),
]);

/** Serves the SDK's multiplexed `websocket` transport by replaying each request against the HTTP routes. */
export interface WebSocketAdapter {
  /** Completes an upgrade for the named container. */
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer, containerId: string): void;
  /** Closes every connection. */
  close(): void;
}

/** Creates the adapter; `baseUrl` is this server's own URL, known once it listens. */
export function createWebSocketAdapter(
  baseUrl: () => string,
  controlToken: string,
  maxBodyBytes: number,
): WebSocketAdapter {
  const server = new WebSocketServer({ noServer: true, maxPayload: maxBodyBytes });

  const send = async (socket: WebSocket, message: Record<string, unknown>): Promise<boolean> => {
    if (socket.readyState !== socket.OPEN) return false;
    socket.send(JSON.stringify(message));
    while (socket.bufferedAmount > SEND_HIGH_WATER && socket.readyState === socket.OPEN)
      await new Promise((resolve) => setTimeout(resolve, 10));
    return socket.readyState === socket.OPEN;
  };

  const relayStream = async (socket: WebSocket, id: string, response: Response): Promise<void> => {
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let boundary = buffer.indexOf("\n\n");
      while (boundary !== -1) {
        const frame = buffer.slice(0, boundary);
        buffer = buffer.slice(boundary + 2);
        const lines = frame.split("\n");
        const event = lines
          .find((line) => line.startsWith("event:"))
          ?.slice(6)
          .trim();
        const data = lines
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trim())
          .join("\n");
        if (
          !(await send(socket, {
            type: "stream",
            id,
            ...(event === undefined ? {} : { event }),
            data,
          }))
        ) {
          await reader.cancel();
          return;
        }
        boundary = buffer.indexOf("\n\n");
      }
    }
    await send(socket, { type: "response", id, status: response.status, done: true });
  };

  const serve = (socket: WebSocket, containerId: string): void => {
    const pending = new Map<string, AbortController>();
    socket.on("message", (raw) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(String(raw));
      } catch {
        void send(socket, {
          type: "error",
          code: "PARSE_ERROR",
          message: "Invalid JSON message",
          status: 400,
        });
        return;
      }
      const message = clientMessageSchema.safeParse(parsed);
      if (!message.success) {
        void send(socket, {
          type: "error",
          code: "INVALID_REQUEST",
          message: "Message must be a valid request or cancel",
          status: 400,
        });
        return;
      }
      if (message.data.type === "cancel") {
        pending.get(message.data.id)?.abort();
        return;
      }
      const { id, method, path, body, headers } = message.data;
      const controller = new AbortController();
      pending.set(id, controller);
      void (async () => {
        const response = await fetch(`${baseUrl()}${path}`, {
          method,
          headers: {
            "Content-Type": "application/json",
            ...headers,
            ...controlTokenHeaders(controlToken),
            [CONTAINER_ID_HEADER]: containerId,
          },
          ...(body !== undefined && (method === "POST" || method === "PUT")
            ? { body: JSON.stringify(body) }
            : {}),
          signal: controller.signal,
        });
        if ((response.headers.get("content-type") ?? "").includes("text/event-stream")) {
          await relayStream(socket, id, response);
          return;
        }
        const text = await response.text();
        let payload: unknown;
        try {
          payload = text === "" ? undefined : JSON.parse(text);
        } catch {
          payload = undefined;
        }
        await send(socket, {
          type: "response",
          id,
          status: response.status,
          body: payload,
          done: true,
        });
      })()
        .catch((error: unknown) => {
          if (controller.signal.aborted) return;
          void send(socket, {
            type: "error",
            id,
            code: "STREAM_ERROR",
            message: error instanceof Error ? error.message : String(error),
            status: 500,
          });
        })
        .finally(() => pending.delete(id));
    });
    // A dropped connection cancels what it was waiting for, which stops streamed commands.
    socket.on("close", () => {
      for (const controller of pending.values()) controller.abort();
      pending.clear();
    });
  };

  return {
    upgrade(request, socket, head, containerId) {
      server.handleUpgrade(request, socket, head, (client) => serve(client, containerId));
    },
    close() {
      for (const client of server.clients) client.terminate();
      server.close();
    },
  };
}
