/**
 * A small client of the adapter protocol, as the platform side would use it: bearer auth, the
 * installation header, every answer checked for the protocol header and parsed with the protocol's
 * schemas, errors surfaced as {@link ProtocolError} with their code and status.
 */
import type * as z from "zod";
import { INSTALLATION_HEADER, PROTOCOL_HEADER } from "../../src/protocol/constants.js";
import {
  type StreamLine,
  createSandboxResponseSchema,
  deleteResponseSchema,
  directoryListingSchema,
  errorBodySchema,
  execResponseSchema,
  infoSchema,
  pathResultSchema,
  sandboxListSchema,
  sandboxViewSchema,
  streamLineSchema,
} from "../../src/protocol/schemas.js";

/** An error answer of the Worker. */
export class ProtocolError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly context: Record<string, unknown> | undefined,
  ) {
    super(`${status} ${code}: ${message}`);
    this.name = "ProtocolError";
  }
}

export interface ClientOptions {
  readonly baseUrl: string;
  readonly token: string;
  readonly installation: string;
}

export type CreateBody = {
  id: string;
  template: { image: string };
  size?: string | { vcpu: number; memoryMib: number; diskMb: number };
  env?: Record<string, string>;
  ttlSeconds?: number;
  fromSnapshot?: string;
};

export type ExecBody = {
  argv: string[];
  cwd?: string;
  env?: Record<string, string>;
  timeoutMs?: number;
};

/** Creates a client for one installation. */
export function createProtocolClient(options: ClientOptions) {
  const sandboxPath = (id: string, suffix = ""): string =>
    `/adapter/v1/sandboxes/${encodeURIComponent(id)}${suffix}`;
  const withPath = (path: string, extra: Record<string, string> = {}): string =>
    `?${new URLSearchParams({ path, ...extra }).toString()}`;

  async function raw(
    method: string,
    path: string,
    init: { body?: string | Uint8Array; json?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = {
      Authorization: `Bearer ${options.token}`,
      [INSTALLATION_HEADER]: options.installation,
      ...init.headers,
    };
    let body = init.body;
    if (init.json !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(init.json);
    }
    const response = await fetch(`${options.baseUrl}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    if (response.headers.get(PROTOCOL_HEADER) !== "1")
      throw new Error(`${method} ${path}: answer without ${PROTOCOL_HEADER}: 1`);
    return response;
  }

  async function failOn(response: Response): Promise<Response> {
    if (response.ok) return response;
    const body = errorBodySchema.parse(await response.json());
    throw new ProtocolError(response.status, body.code, body.message, body.context);
  }

  async function call<T extends z.ZodType>(
    schema: T,
    method: string,
    path: string,
    init?: Parameters<typeof raw>[2],
  ): Promise<{ status: number; body: z.output<T> }> {
    const response = await failOn(await raw(method, path, init));
    return { status: response.status, body: schema.parse(await response.json()) };
  }

  return {
    raw,
    info: async () => (await call(infoSchema, "GET", "/adapter/v1/info")).body,
    create: (body: CreateBody) =>
      call(createSandboxResponseSchema, "POST", "/adapter/v1/sandboxes", { json: body }),
    list: async (query: { cursor?: string; limit?: number } = {}) => {
      const search = new URLSearchParams();
      if (query.cursor !== undefined) search.set("cursor", query.cursor);
      if (query.limit !== undefined) search.set("limit", String(query.limit));
      return (await call(sandboxListSchema, "GET", `/adapter/v1/sandboxes?${search.toString()}`))
        .body;
    },
    get: async (id: string) => (await call(sandboxViewSchema, "GET", sandboxPath(id))).body,
    delete: async (id: string) =>
      (await call(deleteResponseSchema, "DELETE", sandboxPath(id))).body,
    setTtl: async (id: string, ttlSeconds: number) =>
      (await call(sandboxViewSchema, "PUT", sandboxPath(id, "/ttl"), { json: { ttlSeconds } }))
        .body,
    exec: async (id: string, body: ExecBody) =>
      (await call(execResponseSchema, "POST", sandboxPath(id, "/exec"), { json: body })).body,
    /** Runs a streamed exec and returns the raw text and its parsed lines. */
    async execStream(
      id: string,
      body: ExecBody,
    ): Promise<{ contentType: string | null; text: string; lines: StreamLine[] }> {
      const response = await failOn(
        await raw("POST", sandboxPath(id, "/exec/stream"), { json: body }),
      );
      const text = await response.text();
      if (!text.endsWith("\n")) throw new Error("the NDJSON stream does not end with a newline");
      const lines = text
        .slice(0, -1)
        .split("\n")
        .map((line) => streamLineSchema.parse(JSON.parse(line)));
      return { contentType: response.headers.get("Content-Type"), text, lines };
    },
    readFile: async (id: string, path: string) =>
      new Uint8Array(
        await (
          await failOn(await raw("GET", sandboxPath(id, `/files${withPath(path)}`)))
        ).arrayBuffer(),
      ),
    /**
     * `closeConnection` sends `Connection: close`: workerd answers a body it refuses by its length before reading
     * it and then resets the connection, which a pooled client would otherwise reuse for the next request.
     */
    writeFile: async (
      id: string,
      path: string,
      content: Uint8Array | string,
      init: { closeConnection?: boolean } = {},
    ) =>
      (
        await call(pathResultSchema, "PUT", sandboxPath(id, `/files${withPath(path)}`), {
          body: content,
          headers: {
            "Content-Type": "application/octet-stream",
            ...(init.closeConnection ? { Connection: "close" } : {}),
          },
        })
      ).body,
    removePath: async (id: string, path: string, recursive = false) =>
      (
        await call(
          pathResultSchema,
          "DELETE",
          sandboxPath(id, `/files${withPath(path, { recursive: String(recursive) })}`),
        )
      ).body,
    makeDirectory: async (id: string, path: string, recursive = false) =>
      (
        await call(
          pathResultSchema,
          "POST",
          sandboxPath(id, `/directories${withPath(path, { recursive: String(recursive) })}`),
        )
      ).body,
    listDirectory: async (id: string, path: string, recursive = false) =>
      (
        await call(
          directoryListingSchema,
          "GET",
          sandboxPath(id, `/directories${withPath(path, { recursive: String(recursive) })}`),
        )
      ).body,
    /** A request through the port route; the answer is returned as is (errors included). */
    port: (
      id: string,
      port: number,
      path: string,
      init: { method?: string; body?: string; headers?: Record<string, string> } = {},
    ) =>
      raw(init.method ?? "GET", sandboxPath(id, `/ports/${port}${path}`), {
        ...(init.body === undefined ? {} : { body: init.body }),
        ...(init.headers ? { headers: init.headers } : {}),
      }),
    /** Runs `call`, expecting a {@link ProtocolError}; returns it. */
    async failure(call: () => Promise<unknown>): Promise<ProtocolError> {
      try {
        await call();
      } catch (error) {
        if (error instanceof ProtocolError) return error;
        throw error;
      }
      throw new Error("the call succeeded; an error answer was expected");
    },
  };
}

export type ProtocolClient = ReturnType<typeof createProtocolClient>;
