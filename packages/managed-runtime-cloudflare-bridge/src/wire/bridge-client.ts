import {
  AbortedError,
  LeaseLostError,
  UpstreamProtocolError,
  parseRecord,
} from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import {
  bridgeErrorFromPayload,
  bridgeErrorFromResponse,
  isCapacityRefusal,
} from "./bridge-errors.js";
import { guardedBody, requestFailure, wasRefused } from "./guarded-body.js";
import { bridgeFetch } from "./keep-alive-fetch.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy, backoffDelay, delay } from "./retry.js";
import { parseSseStream } from "./sse-parser.js";

/** Sandbox ids the bridge accepts. */
export const BRIDGE_SANDBOX_ID_PATTERN = /^[a-z2-7]{1,128}$/;

/**
 * The delete of each sandbox this process has in flight, by bridge and id, across every client. The bridge
 * answers a delete of a sandbox whose container is gone by starting a fresh one and then destroying it; two
 * such deletes at once can both start one while only the one assigned last is destroyed, which leaves the
 * other running with nothing pointing at it. So deletes of one sandbox from this process go one at a time,
 * also between driver instances (a host's late deletes and a reconciler's reap of the same sandbox).
 */
const processDeletes = new Map<string, Promise<void>>();

/** Options of {@link createBridgeClient}. */
export interface BridgeClientOptions {
  readonly baseUrl: string;
  /** The bridge's SANDBOX_API_KEY. Sent only in the Authorization header. */
  readonly apiKey: string;
  /** @default a fetch that closes idle connections before the bridge does ({@link bridgeFetch}) */
  readonly fetch?: typeof fetch;
  readonly retry?: RetryPolicy;
  /** Largest accepted exec event frame. @default 8 MiB */
  readonly maxFrameBytes?: number;
  readonly random?: () => number;
}

/** One decoded exec event. */
export type BridgeExecEvent =
  | { readonly type: "stdout" | "stderr"; readonly data: Uint8Array }
  | { readonly type: "exit"; readonly exitCode: number };

/** Input of {@link BridgeClient.exec}. */
export interface BridgeExecInput {
  readonly argv: readonly string[];
  readonly cwd?: string;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /**
   * The command is safe to run twice (a driver helper that writes only into its own scratch folder, or reads):
   * a connection that fails before any answer is retried with the retry policy. Answers (429, 503 …) are never
   * retried for exec, so capacity refusals still surface at once. @default false
   */
  readonly retryUnreachable?: boolean;
}

/** Typed HTTP client of the Cloudflare Sandbox Bridge API (`/v1/sandbox…`). */
export interface BridgeClient {
  /** `POST /v1/sandbox`: mints a sandbox id; no container starts yet. Not retried. */
  create(signal?: AbortSignal): Promise<string>;
  /** `GET …/running`. Retried. Note: the bridge starts a container to answer. */
  running(id: string, signal?: AbortSignal): Promise<boolean>;
  /** `POST …/exec`: streams decoded events; the last one is `exit`. Retried only when unreachable and `retryUnreachable`. */
  exec(id: string, input: BridgeExecInput): AsyncGenerator<BridgeExecEvent>;
  /** `GET …/file/<path>`: raw bytes. Retried. A missing file reads as an empty body on real bridges. */
  readFile(
    id: string,
    workspacePath: string,
    signal?: AbortSignal,
  ): Promise<ReadableStream<Uint8Array>>;
  /** `PUT …/file/<path>`. Not retried. */
  writeFile(
    id: string,
    workspacePath: string,
    body: Uint8Array,
    signal?: AbortSignal,
  ): Promise<void>;
  /** `POST …/persist`: a tar of `/workspace`. Not retried. */
  persist(
    id: string,
    excludes: readonly string[],
    signal?: AbortSignal,
  ): Promise<ReadableStream<Uint8Array>>;
  /** `POST …/hydrate`: extracts a tar into `/workspace`. Never retried. */
  hydrate(id: string, tar: Uint8Array, signal?: AbortSignal): Promise<void>;
  /**
   * `DELETE /v1/sandbox/:id`: 204, 404 and 503 `capacity_exceeded` (no container runs for the id) are
   * success; concurrent calls on this client share one request, and a delete of the same sandbox by another
   * client in this process is waited for first. Retried.
   */
  destroy(id: string): Promise<void>;
}

const createResponseSchema = z.object({
  id: z.string().regex(BRIDGE_SANDBOX_ID_PATTERN, "not a bridge sandbox id"),
});
const runningResponseSchema = z.object({ running: z.boolean() });
const exitPayloadSchema = z.object({ exit_code: z.number().int().refine(Number.isSafeInteger) });
const BASE64_PATTERN = /^[A-Za-z0-9+/]*={0,2}$/;

/** Creates a {@link BridgeClient}. Options are validated by the driver factory. */
export function createBridgeClient(options: BridgeClientOptions): BridgeClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const fetchImpl = options.fetch ?? bridgeFetch();
  const retry = options.retry ?? DEFAULT_RETRY_POLICY;
  const maxFrameBytes = options.maxFrameBytes ?? 8 * 1024 * 1024;
  const deletes = new Map<string, Promise<void>>();
  // Ids a delete was sent for, newest last, bounded: a retry of another call for one of them is not sent.
  const deletedIds = new Set<string>();
  const rememberDeleted = (id: string): void => {
    deletedIds.delete(id);
    deletedIds.add(id);
    if (deletedIds.size > 4096) deletedIds.delete(deletedIds.values().next().value as string);
  };

  const sandboxUrl = (id: string, suffix = ""): string => {
    if (!BRIDGE_SANDBOX_ID_PATTERN.test(id)) {
      throw new UpstreamProtocolError({
        message: "sandbox id is not in the bridge's id alphabet",
        context: { operation: "address" },
      });
    }
    return `${baseUrl}/v1/sandbox/${id}${suffix}`;
  };

  /** `idempotent`: retried when unreachable and on 429/502/503/504; `"unreachable"`: only when no answer came. */
  const send = async (
    operation: string,
    url: string,
    init: RequestInit,
    idempotent: boolean | "unreachable",
    id?: string,
  ): Promise<Response> => {
    const headers = new Headers(init.headers);
    headers.set("authorization", `Bearer ${options.apiKey}`);
    const attempts = idempotent ? retry.attempts : 1;
    // The bridge answers any call for an id with a fresh container: nothing is retried past a delete of it.
    const deleted = (): boolean => id !== undefined && operation !== "delete" && deletedIds.has(id);
    // Whether any attempt may have reached the bridge (a refused connection carried nothing).
    let reached = false;
    for (let attempt = 0; ; attempt++) {
      let response: Response | null = null;
      let failure: unknown = null;
      try {
        response = await fetchImpl(url, { ...init, headers });
      } catch (error) {
        if (init.signal?.aborted)
          throw new AbortedError({ message: `bridge ${operation} aborted`, cause: error });
        failure = error;
      }
      reached ||= response !== null || !wasRefused(failure);
      const transient =
        response === null ||
        (idempotent === true && [429, 502, 503, 504].includes(response.status));
      if (!transient || attempt + 1 >= attempts) {
        if (response === null) throw requestFailure(operation, failure, [options.apiKey], !reached);
        return response;
      }
      await response?.body?.cancel().catch(() => undefined);
      // A delete sent before or while this attempt failed ends the call the same way: as a lost lease.
      if (!deleted())
        await delay(backoffDelay(retry, attempt, options.random), init.signal ?? undefined);
      if (deleted())
        throw new LeaseLostError({
          message: `bridge sandbox was destroyed; ${operation} not retried`,
          context: { operation },
        });
    }
  };

  const expectOk = async (operation: string, response: Response): Promise<Response> => {
    if (response.ok) return response;
    throw await bridgeErrorFromResponse(operation, response);
  };

  const readJson = async <S extends z.ZodType>(
    operation: string,
    response: Response,
    schema: S,
  ): Promise<z.output<S>> => {
    let payload: unknown;
    try {
      payload = await response.json();
    } catch (error) {
      throw new UpstreamProtocolError({
        message: `bridge ${operation} answered with a body that is not JSON`,
        context: { operation },
        cause: error,
      });
    }
    return parseRecord(schema, payload, {
      record: `bridge ${operation} response`,
      code: "upstream_protocol",
    });
  };

  const fileUrl = (id: string, workspacePath: string): string => {
    const relative = workspacePath.replace(/^\/+/, "");
    return sandboxUrl(id, `/file/${relative.split("/").map(encodeURIComponent).join("/")}`);
  };

  return {
    async create(signal) {
      const response = await expectOk(
        "create",
        await send("create", `${baseUrl}/v1/sandbox`, { method: "POST", signal }, false),
      );
      return (await readJson("create", response, createResponseSchema)).id;
    },

    async running(id, signal) {
      const response = await expectOk(
        "running",
        await send("running", sandboxUrl(id, "/running"), { method: "GET", signal }, true, id),
      );
      return (await readJson("running", response, runningResponseSchema)).running;
    },

    async *exec(id, input) {
      const body = JSON.stringify({
        argv: input.argv,
        ...(input.cwd ? { cwd: input.cwd } : {}),
        ...(input.timeoutMs ? { timeout_ms: input.timeoutMs } : {}),
      });
      const response = await expectOk(
        "exec",
        await send(
          "exec",
          sandboxUrl(id, "/exec"),
          {
            method: "POST",
            body,
            headers: { "content-type": "application/json" },
            signal: input.signal,
          },
          input.retryUnreachable ? "unreachable" : false,
          id,
        ),
      );
      const contentType = response.headers.get("content-type") ?? "";
      if (!contentType.startsWith("text/event-stream") || !response.body) {
        await response.body?.cancel().catch(() => undefined);
        throw new UpstreamProtocolError({
          message: `bridge exec answered ${contentType || "no content type"} instead of an event stream`,
          context: { operation: "exec" },
        });
      }
      for await (const frame of parseSseStream(guardedBody("exec", response.body, input.signal), {
        maxFrameBytes,
        signal: input.signal,
      })) {
        if (frame.event === "stdout" || frame.event === "stderr") {
          const compact = frame.data.replace(/\s+/g, "");
          if (!BASE64_PATTERN.test(compact) || compact.length % 4 !== 0) {
            throw new UpstreamProtocolError({
              message: `bridge exec ${frame.event} frame is not base64`,
              context: { operation: "exec" },
            });
          }
          yield { type: frame.event, data: Buffer.from(compact, "base64") };
        } else if (frame.event === "exit") {
          const payload = parseJsonFrame(frame.data);
          const exit = parseRecord(exitPayloadSchema, payload, {
            record: "bridge exec exit frame",
            code: "upstream_protocol",
          });
          yield { type: "exit", exitCode: exit.exit_code };
          return;
        } else if (frame.event === "error") {
          throw bridgeErrorFromPayload("exec", null, parseJsonFrame(frame.data));
        }
        // Other events are ignored: the stream format allows additions.
      }
      throw new UpstreamProtocolError({
        message: "bridge exec stream ended without an exit event",
        context: { operation: "exec" },
      });
    },

    async readFile(id, workspacePath, signal) {
      const response = await expectOk(
        "file.read",
        await send("file.read", fileUrl(id, workspacePath), { method: "GET", signal }, true, id),
      );
      return response.body
        ? guardedBody("file.read", response.body, signal)
        : new ReadableStream({ start: (controller) => controller.close() });
    },

    async writeFile(id, workspacePath, body, signal) {
      const response = await send(
        "file.write",
        fileUrl(id, workspacePath),
        { method: "PUT", ...uncopiedBody(body, "application/octet-stream"), signal },
        false,
      );
      await expectOk("file.write", response);
      await response.body?.cancel().catch(() => undefined);
    },

    async persist(id, excludes, signal) {
      const query =
        excludes.length > 0 ? `?excludes=${excludes.map(encodeURIComponent).join(",")}` : "";
      const response = await expectOk(
        "persist",
        await send(
          "persist",
          sandboxUrl(id, `/persist${query}`),
          { method: "POST", signal },
          false,
        ),
      );
      if (!response.body)
        throw new UpstreamProtocolError({
          message: "bridge persist answered without a body",
          context: { operation: "persist" },
        });
      return guardedBody("persist", response.body, signal);
    },

    async hydrate(id, tar, signal) {
      const response = await send(
        "hydrate",
        sandboxUrl(id, "/hydrate"),
        { method: "POST", ...uncopiedBody(tar, "application/x-tar"), signal },
        false,
      );
      await expectOk("hydrate", response);
      await response.body?.cancel().catch(() => undefined);
    },

    destroy(id) {
      const inFlight = deletes.get(id);
      if (inFlight) return inFlight;
      rememberDeleted(id);
      const key = `${baseUrl} ${id}`;
      const before = processDeletes.get(key);
      const attempt = (async () => {
        await before?.catch(() => undefined);
        const response = await send("delete", sandboxUrl(id), { method: "DELETE" }, true);
        if (!response.ok && response.status !== 404) {
          const error = await bridgeErrorFromResponse("delete", response);
          // The bridge resolves the id's container before deleting it: a running one is returned as it is,
          // and only an id without one reaches the capacity check. So a refusal for capacity shows that no
          // container runs for this id, which is what the delete was for (a late start of a call still in
          // flight is covered by the tombstoning client's late deletes).
          if (isCapacityRefusal(error)) return;
          throw error;
        }
        await response.body?.cancel().catch(() => undefined);
      })().finally(() => {
        deletes.delete(id);
        if (processDeletes.get(key) === attempt) processDeletes.delete(key);
      });
      deletes.set(id, attempt);
      processDeletes.set(key, attempt);
      return attempt;
    },
  };
}

/**
 * A request body of `bytes` that Node's fetch sends as it lies: given a Uint8Array it first copies it whole
 * (a part's size more memory per request in flight); a one-chunk stream with its length is not copied.
 */
function uncopiedBody(
  bytes: Uint8Array,
  contentType: string,
): Pick<RequestInit, "body" | "headers"> & { readonly duplex: "half" } {
  const body = new ReadableStream<Uint8Array>({
    start: (controller) => (controller.enqueue(bytes), controller.close()),
  });
  return {
    body,
    duplex: "half",
    headers: { "content-type": contentType, "content-length": String(bytes.byteLength) },
  };
}

function parseJsonFrame(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch (error) {
    throw new UpstreamProtocolError({
      message: "bridge exec frame is not JSON",
      context: { operation: "exec" },
      cause: error,
    });
  }
}
