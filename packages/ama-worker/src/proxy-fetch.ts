import { type IncomingMessage, type RequestOptions, request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { Readable } from "node:stream";
import { type TLSSocket, connect as tlsConnect } from "node:tls";

/** Statuses whose response has no body (a Response refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** Set by a sandbox whose only way out is a proxy (the local stack's containers with a network of their own). */
export const EGRESS_PROXY_ENV = "OMA_EGRESS_PROXY";

/**
 * A `fetch` that sends every call through the proxy `OMA_EGRESS_PROXY` names, or undefined when the sandbox
 * names none (the SDK then uses Node's own `fetch`, which connects directly and ignores `HTTP(S)_PROXY`,
 * as before). That variable, unlike `HTTP(S)_PROXY`, means the proxy is the sandbox's only way out for every
 * destination, the host's loopback addresses included (a local control plane), so `NO_PROXY` does not
 * apply. Plain HTTP goes to the proxy as absolute-form requests, HTTPS through a `CONNECT` tunnel. Built on
 * `node:http`: a second HTTP client library would load a second parser, which a sandbox's address-space
 * limit may not leave room for.
 */
export function proxyFetchFor(
  _baseURL: string,
  env: Readonly<Record<string, string | undefined>>,
): typeof fetch | undefined {
  const proxy = env[EGRESS_PROXY_ENV];
  if (!proxy) return undefined;
  const proxyUrl = new URL(proxy);
  const proxyAddress = {
    host: proxyUrl.hostname.replace(/^\[|\]$/g, ""),
    port: Number(proxyUrl.port || 80),
  };
  return async (input, init) => {
    const request = new Request(input, {
      ...init,
      ...(init?.body ? { duplex: "half" } : {}),
    } as RequestInit);
    const target = new URL(request.url);
    const headers: Record<string, string> = {
      ...Object.fromEntries(request.headers),
      host: target.host,
    };
    const options: RequestOptions = { method: request.method, headers, signal: request.signal };
    const answer = await new Promise<IncomingMessage>((resolve, reject) => {
      const send = (outgoing: ReturnType<typeof httpRequest>): void => {
        outgoing.once("response", resolve).once("error", reject);
        if (request.body === null) outgoing.end();
        else
          Readable.fromWeb(request.body as Parameters<typeof Readable.fromWeb>[0])
            .once("error", reject)
            .pipe(outgoing);
      };
      if (target.protocol !== "https:") {
        send(httpRequest({ ...proxyAddress, ...options, path: target.href }));
        return;
      }
      const authority = `${target.hostname}:${target.port || 443}`;
      const tunnel = httpRequest({
        ...proxyAddress,
        method: "CONNECT",
        path: authority,
        headers: { host: authority },
        signal: request.signal,
      });
      tunnel.once("error", reject).once("connect", (response, socket) => {
        if (response.statusCode !== 200) {
          socket.destroy();
          reject(
            new TypeError(
              `fetch failed: the proxy refused CONNECT ${authority} with ${response.statusCode}`,
            ),
          );
          return;
        }
        const secured: TLSSocket = tlsConnect({ socket, servername: target.hostname });
        send(httpsRequest(target, { ...options, agent: false, createConnection: () => secured }));
      });
      tunnel.end();
    });
    const responseHeaders = new Headers();
    for (let index = 0; index + 1 < answer.rawHeaders.length; index += 2) {
      responseHeaders.append(
        answer.rawHeaders[index] as string,
        answer.rawHeaders[index + 1] as string,
      );
    }
    const status = answer.statusCode ?? 502;
    const body = NULL_BODY_STATUSES.has(status)
      ? null
      : (Readable.toWeb(answer) as ReadableStream<Uint8Array>);
    if (body === null) answer.resume();
    return new Response(body, {
      status,
      statusText: answer.statusMessage ?? "",
      headers: responseHeaders,
    });
  };
}
