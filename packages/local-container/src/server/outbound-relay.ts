import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  type EgressCertificateAuthority,
  type EgressHttpHandler,
  type EgressHttpsInterception,
  createEgressCertificateAuthority,
} from "@open-managed-agents/local-confinement";
import * as z from "zod";
import type { OutboundJob } from "../protocol.js";
import { readBody } from "./request-body.js";

/** How long a container's request waits for its Worker to answer before the guest gets 504. */
const ANSWER_TIMEOUT_MS = 60_000;
/** How long one collect call waits for a request before answering 204 (the Worker asks again). */
export const COLLECT_WAIT_MS = 10_000;
/** Headers of the hop between the guest and the proxy, never handed on. */
const HOP_HEADERS = new Set([
  "proxy-authorization",
  "proxy-connection",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "te",
  "upgrade",
]);

export const outboundAnswerSchema = z
  .object({
    status: z.number().int().min(200).max(599),
    headers: z.record(z.string(), z.string()),
    body: z.string(),
  })
  .strict();

interface Pending {
  readonly response: ServerResponse;
  readonly timer: NodeJS.Timeout;
}

interface Queue {
  readonly jobs: OutboundJob[];
  waiter: ((job: OutboundJob | null) => void) | undefined;
  readonly pending: Map<string, Pending>;
}

/**
 * The server's half of Worker-routed egress: the proxy of such a container queues each plain-HTTP request
 * (and each HTTPS request it intercepted) here, the container's Durable Object collects it over the admin route, runs the Worker's outbound
 * handler and posts the answer, which goes back to the guest. Nothing here decides or forwards anything.
 */
export interface OutboundRelay {
  /** The proxy handler of container `id`. */
  handlerFor(id: string): EgressHttpHandler;
  /**
   * The HTTPS interception of container `id`: the proxy terminates a `CONNECT` to a host its Worker
   * registered with `interceptOutboundHttps` (see {@link OutboundRelay.setHttpsHosts}) with a leaf of
   * this server's CA, and queues each request inside like a plain-HTTP one; any other `CONNECT` gets 403.
   */
  httpsFor(id: string): EgressHttpsInterception;
  /** The hosts container `id`'s Worker intercepts HTTPS for (`*` = all), as its last start or collect call said. */
  setHttpsHosts(id: string, hosts: readonly string[]): void;
  /** Waits up to `waitMs` for the next request of container `id`; null when none came. */
  collect(id: string, waitMs: number): Promise<OutboundJob | null>;
  /** Sends the answer to the guest; false when the request is unknown (answered, timed out, or another container's). */
  answer(id: string, jobId: string, answer: z.output<typeof outboundAnswerSchema>): boolean;
  /** Ends the container's waiting requests (502) and its waiting collect call. */
  drop(id: string): void;
}

function refuse(response: ServerResponse, status: number, text: string): void {
  if (response.headersSent) return void response.destroy();
  response
    .writeHead(status, { "Content-Type": "text/plain", "Content-Length": Buffer.byteLength(text) })
    .end(text);
}

/** Creates the relay; request bodies over `maxBodyBytes` get 413. */
export function createOutboundRelay(maxBodyBytes: number): OutboundRelay {
  const queues = new Map<string, Queue>();
  const httpsHosts = new Map<string, ReadonlySet<string>>();
  // One CA per server, created when the first container needs it; its key stays in this process.
  let authority: EgressCertificateAuthority | undefined;
  const queueOf = (id: string): Queue => {
    let queue = queues.get(id);
    if (queue === undefined) {
      queue = { jobs: [], waiter: undefined, pending: new Map() };
      queues.set(id, queue);
    }
    return queue;
  };

  const enqueue = async (
    id: string,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> => {
    let body: Buffer;
    try {
      body = await readBody(request, maxBodyBytes);
    } catch {
      return refuse(response, 413, `request body over ${maxBodyBytes} bytes\n`);
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined || HOP_HEADERS.has(name)) continue;
      headers[name] = Array.isArray(value) ? value.join(", ") : value;
    }
    const job: OutboundJob = {
      id: randomUUID(),
      method: request.method ?? "GET",
      url: request.url ?? "",
      headers,
      body: body.toString("base64"),
    };
    const queue = queueOf(id);
    const timer = setTimeout(() => {
      if (queue.pending.delete(job.id))
        refuse(response, 504, "the container's Worker did not answer the request\n");
    }, ANSWER_TIMEOUT_MS);
    timer.unref();
    queue.pending.set(job.id, { response, timer });
    response.once("close", () => {
      const pending = queue.pending.get(job.id);
      if (pending?.response === response && !response.writableEnded) {
        clearTimeout(pending.timer);
        queue.pending.delete(job.id);
      }
    });
    const waiter = queue.waiter;
    if (waiter !== undefined) {
      queue.waiter = undefined;
      waiter(job);
    } else queue.jobs.push(job);
  };

  return {
    handlerFor(id) {
      return (request, response) => {
        enqueue(id, request, response).catch(() => refuse(response, 502, "egress relay failed\n"));
      };
    },
    httpsFor(id) {
      authority ??= createEgressCertificateAuthority({
        commonName: "open-managed-agents local container egress CA",
      });
      return {
        authority,
        intercepts(host) {
          const hosts = httpsHosts.get(id);
          return hosts !== undefined && (hosts.has("*") || hosts.has(host.toLowerCase()));
        },
      };
    },
    setHttpsHosts(id, hosts) {
      if (hosts.length === 0) httpsHosts.delete(id);
      else httpsHosts.set(id, new Set(hosts.map((host) => host.toLowerCase())));
    },
    collect(id, waitMs) {
      const queue = queueOf(id);
      // Skip requests whose guest went away while they waited.
      while (queue.jobs.length > 0) {
        const job = queue.jobs.shift() as OutboundJob;
        if (queue.pending.has(job.id)) return Promise.resolve(job);
      }
      queue.waiter?.(null);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          if (queue.waiter === settle) queue.waiter = undefined;
          resolve(null);
        }, waitMs);
        const settle = (job: OutboundJob | null): void => {
          clearTimeout(timer);
          resolve(job);
        };
        queue.waiter = settle;
      });
    },
    answer(id, jobId, answer) {
      const pending = queues.get(id)?.pending.get(jobId);
      if (pending === undefined) return false;
      clearTimeout(pending.timer);
      queues.get(id)?.pending.delete(jobId);
      const body = Buffer.from(answer.body, "base64");
      const headers = Object.fromEntries(
        Object.entries(answer.headers).filter(
          ([name]) =>
            !HOP_HEADERS.has(name.toLowerCase()) &&
            name.toLowerCase() !== "content-length" &&
            name.toLowerCase() !== "content-encoding",
        ),
      );
      pending.response
        .writeHead(answer.status, { ...headers, "Content-Length": body.length })
        .end(body);
      return true;
    },
    drop(id) {
      httpsHosts.delete(id);
      const queue = queues.get(id);
      if (queue === undefined) return;
      queues.delete(id);
      queue.waiter?.(null);
      for (const { response, timer } of queue.pending.values()) {
        clearTimeout(timer);
        refuse(response, 502, "the container stopped\n");
      }
    },
  };
}
