import * as http from "node:http";
import * as https from "node:https";
import { Readable, finished } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";

/** Bytes of a response body read ahead of its consumer. */
const RESPONSE_READ_AHEAD_BYTES = 64 * 1024;
/** Statuses (of those `responseOf` accepts) whose responses have no body, which `Response` refuses one for. */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

interface Agents {
  readonly http: http.Agent;
  readonly https: https.Agent;
}

export interface KeepAliveFetchOptions {
  /**
   * How long an idle connection is kept for reuse. Keep it under the idle timeout of every server the fetch
   * talks to: a server that closes an idle connection while a request is written on it resets that request.
   * A request waiting for its answer is not idle and is never cut by it.
   */
  readonly idleConnectionMs: number;
}

/**
 * A `fetch` on Node's own HTTP client (its parser is native code), with a connection pool of its own whose
 * idle connections close after `idleConnectionMs`. Node's `fetch` (undici) parses HTTP in WebAssembly, which
 * V8 compiles when the first connection opens and again with its optimizing compiler once a process is busy:
 * spikes of memory a long-running process pays on top of whatever it is doing. Only what a JSON or streaming
 * client uses is supported: a string, bytes or a stream as the body (with its length in `content-length`)
 * and an abort signal; nothing is decompressed and no redirect is followed. Call it once and reuse the fetch,
 * so its connections are reused.
 */
export function createKeepAliveFetch(options: KeepAliveFetchOptions): typeof fetch {
  const agentOptions = { keepAlive: true, timeout: options.idleConnectionMs };
  const pools: Agents = {
    http: new http.Agent(agentOptions),
    https: new https.Agent(agentOptions),
  };
  return ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    send(String(input instanceof Request ? input.url : input), init ?? {}, pools)) as typeof fetch;
}

function send(url: string, init: RequestInit, pools: Agents): Promise<Response> {
  const target = new URL(url);
  const secure = target.protocol === "https:";
  const { signal } = init;
  return new Promise<Response>((resolve, reject) => {
    // As fetch does: a network failure is a TypeError whose cause is the socket's error.
    const fail = (error: unknown) =>
      reject(signal?.aborted ? signal.reason : new TypeError("fetch failed", { cause: error }));
    if (signal?.aborted) return reject(signal.reason);
    const headers: Record<string, string> = {};
    for (const [name, value] of new Headers(init.headers)) headers[name] = value;
    const request = (secure ? https : http).request(target, {
      method: init.method ?? "GET",
      headers,
      agent: secure ? pools.https : pools.http,
      ...(signal ? { signal } : {}),
    });
    request.once("error", fail);
    request.once("response", (incoming) => {
      try {
        resolve(responseOf(incoming, init.method === "HEAD"));
      } catch (error) {
        // A status, status text or header `Response` does not take: not an answer the client can read.
        incoming.destroy();
        fail(error);
      }
    });
    const { body } = init;
    if (body === undefined || body === null) request.end();
    else if (typeof body === "string" || body instanceof Uint8Array) request.end(body);
    else if (body instanceof ReadableStream) {
      const source = Readable.fromWeb(body as unknown as NodeReadableStream<Uint8Array>);
      source.once("error", (error) => request.destroy(error));
      source.pipe(request);
    } else {
      request.destroy();
      reject(new TypeError("keep-alive fetch: unsupported request body"));
    }
  });
}

/** The `Response` of an answer whose headers came; its body streams from `incoming`. */
function responseOf(incoming: http.IncomingMessage, head: boolean): Response {
  const status = incoming.statusCode ?? 0;
  if (status < 200 || status > 599) throw new Error(`unexpected HTTP status ${status}`);
  const headers = new Headers();
  for (let index = 0; index + 1 < incoming.rawHeaders.length; index += 2)
    headers.append(incoming.rawHeaders[index] as string, incoming.rawHeaders[index + 1] as string);
  const response = (body: ReadableStream<Uint8Array> | null) =>
    new Response(body, { status, statusText: incoming.statusMessage ?? "", headers });
  if (NULL_BODY_STATUSES.has(status) || head) {
    const answer = response(null);
    // Drained, with a listener for an error of its socket, which then ends nothing else.
    incoming.on("error", () => undefined).resume();
    return answer;
  }
  return response(bodyOf(incoming));
}

/**
 * `incoming` as a web stream that hands on the very chunks the HTTP parser made, reading
 * {@link RESPONSE_READ_AHEAD_BYTES} ahead. Hand-written because `Readable.toWeb` copies every chunk into a
 * new `Uint8Array`: reading 1 GiB from a local server took 0.61–0.80 s of CPU this way against 0.78–0.89 s
 * through `toWeb` (same peak of array buffers and RSS). The parser's chunks are copies of their own, no view
 * of a pool, so nothing else sees them.
 */
function bodyOf(incoming: http.IncomingMessage): ReadableStream<Uint8Array> {
  let settled = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        incoming.on("data", (chunk: Buffer) => {
          if (settled) return;
          controller.enqueue(chunk);
          if ((controller.desiredSize ?? 0) <= 0) incoming.pause();
        });
        // `finished` reports an answer cut short (the connection closed before the body ended) as an error.
        finished(incoming, (error) => {
          if (settled) return;
          settled = true;
          if (error) controller.error(error);
          else controller.close();
        });
      },
      pull() {
        incoming.resume();
      },
      cancel() {
        settled = true;
        incoming.destroy();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: RESPONSE_READ_AHEAD_BYTES }),
  );
}
