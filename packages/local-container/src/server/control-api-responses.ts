import type { ServerResponse } from "node:http";
import type { ControlApiError } from "./control-api-error.js";

/**
 * CORS headers as the published control server sends them: its CORS middleware runs twice, so every
 * value appears doubled. Reproduced so clients that inspect headers see the same thing.
 */
const ALLOWED_METHODS = "GET, POST, PUT, DELETE, OPTIONS";
const ALLOWED_HEADERS = "Content-Type, Authorization, X-Session-Id, X-Sandbox-Id, X-Trace-Id";
export const CORS_HEADERS: Readonly<Record<string, string>> = {
  "Access-Control-Allow-Origin": "*, *",
  "Access-Control-Allow-Methods": `${ALLOWED_METHODS}, ${ALLOWED_METHODS}`,
  "Access-Control-Allow-Headers": `${ALLOWED_HEADERS}, ${ALLOWED_HEADERS}`,
};

/** ISO-8601 timestamp, as every response carries. */
export function now(): string {
  return new Date().toISOString();
}

/** Sends a JSON body with `Content-Length`. */
export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...CORS_HEADERS,
    ...headers,
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(text)),
  });
  response.end(text);
}

/** Sends a control API error body. */
export function sendError(response: ServerResponse, error: ControlApiError): void {
  sendJson(response, error.httpStatus, error.toBody());
}

/** Sends plain text. */
export function sendText(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, {
    ...CORS_HEADERS,
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Length": String(Buffer.byteLength(text)),
  });
  response.end(text);
}

/** Writes `data: {json}\n\n` frames with no `event:` line. */
export interface SseWriter {
  /** Queues a frame; false when the socket buffer is full and the caller should wait for {@link drained}. */
  write(frame: Record<string, unknown>): boolean;
  /** Writes a frame and waits until the socket drained. */
  send(frame: Record<string, unknown>): Promise<void>;
  /** Resolves once the socket buffer drained or the client went away. */
  drained(): Promise<void>;
  end(): void;
  /** True once the client went away. */
  readonly closed: boolean;
}

/** Opens a 200 `text/event-stream` response. */
export function openSse(response: ServerResponse): SseWriter {
  response.writeHead(200, {
    ...CORS_HEADERS,
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    Connection: "keep-alive",
  });
  const isClosed = (): boolean => response.destroyed || response.writableEnded;
  const drained = (): Promise<void> => {
    if (isClosed() || !response.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const settle = (): void => {
        response.off("drain", settle);
        response.off("close", settle);
        resolve();
      };
      response.once("drain", settle);
      response.once("close", settle);
    });
  };
  const write = (frame: Record<string, unknown>): boolean => {
    if (isClosed()) return true;
    return response.write(`data: ${JSON.stringify(frame)}\n\n`);
  };
  return {
    get closed() {
      return isClosed();
    },
    write,
    drained,
    send(frame) {
      return write(frame) ? Promise.resolve() : drained();
    },
    end() {
      if (!response.writableEnded) response.end();
    },
  };
}
