import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";
import { INSTALLATION_HEADER } from "../protocol/constants.js";

/** Internal headers by which the Worker tells a sandbox object what to forward where. */
export const FORWARD_HEADERS = {
  sandboxId: "X-Plugin-Forward-Sandbox",
  installation: "X-Plugin-Forward-Installation",
  port: "X-Plugin-Forward-Port",
  path: "X-Plugin-Forward-Path",
} as const;

/** The Sandbox SDK's control server; user traffic never reaches it through a port route. */
export const CONTROL_PORT = 3000;

/** Headers never passed to the sandbox: the plugin token, the protocol's own headers, Cloudflare's. */
function isPrivateHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return (
    lower === "authorization" ||
    lower === INSTALLATION_HEADER.toLowerCase() ||
    lower.startsWith("x-plugin-forward-") ||
    lower.startsWith("cf-")
  );
}

/** A validated user port (1024-65535, not the control port). */
export function parsePort(value: string): number {
  const port = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(port) || port < 1_024 || port > 65_535 || port === CONTROL_PORT) {
    throw new InvalidRequestError({
      message: `port must be an integer from 1024 to 65535 other than ${CONTROL_PORT}`,
      context: { port: value },
    });
  }
  return port;
}

/** The request a Worker sends to a sandbox object to forward `request` to `port` at `path`. */
export function forwardingRequest(
  request: Request,
  target: { sandboxId: string; installation: string; port: number; path: string },
): Request {
  const headers = new Headers();
  for (const [name, value] of request.headers) if (!isPrivateHeader(name)) headers.set(name, value);
  headers.set(FORWARD_HEADERS.sandboxId, target.sandboxId);
  headers.set(FORWARD_HEADERS.installation, target.installation);
  headers.set(FORWARD_HEADERS.port, String(target.port));
  headers.set(FORWARD_HEADERS.path, target.path);
  return new Request(request.url, {
    method: request.method,
    headers,
    body: request.body,
    redirect: "manual",
  });
}

/** What a sandbox object reads back from {@link forwardingRequest}; undefined for any other request. */
export function readForwarding(
  request: Request,
): { sandboxId: string; installation: string; port: number; upstream: Request } | undefined {
  const sandboxId = request.headers.get(FORWARD_HEADERS.sandboxId);
  const installation = request.headers.get(FORWARD_HEADERS.installation);
  const port = Number(request.headers.get(FORWARD_HEADERS.port));
  const path = request.headers.get(FORWARD_HEADERS.path);
  if (sandboxId === null || installation === null || path === null || !Number.isInteger(port))
    return undefined;
  const headers = new Headers();
  for (const [name, value] of request.headers) if (!isPrivateHeader(name)) headers.set(name, value);
  const upstream = new Request(`http://localhost:${port}${path}`, {
    method: request.method,
    headers,
    body: request.body,
    redirect: "manual",
  });
  return { sandboxId, installation, port, upstream };
}
