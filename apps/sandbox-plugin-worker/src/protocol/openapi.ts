/**
 * The OpenAPI 3.1 description the Worker serves at `GET /adapter/v1/openapi.json`. Body shapes are
 * generated from the same zod schemas that validate requests, so the document cannot drift from them.
 */
import * as z from "zod";
import { API_PREFIX, INSTALLATION_HEADER, PROTOCOL_HEADER, PROTOCOL_VERSION } from "./constants.js";
import {
  createSandboxRequestSchema,
  createSandboxResponseSchema,
  deleteResponseSchema,
  directoryListingSchema,
  errorBodySchema,
  execRequestSchema,
  execResponseSchema,
  infoSchema,
  pathResultSchema,
  sandboxListSchema,
  sandboxViewSchema,
  streamLineSchema,
  ttlRequestSchema,
} from "./schemas.js";

type JsonObject = Record<string, unknown>;

const REQUEST_SCHEMAS = {
  CreateSandboxRequest: createSandboxRequestSchema,
  TtlRequest: ttlRequestSchema,
  ExecRequest: execRequestSchema,
};
const RESPONSE_SCHEMAS = {
  Info: infoSchema,
  Sandbox: sandboxViewSchema,
  CreateSandboxResponse: createSandboxResponseSchema,
  SandboxList: sandboxListSchema,
  DeleteResponse: deleteResponseSchema,
  ExecResponse: execResponseSchema,
  StreamLine: streamLineSchema,
  DirectoryListing: directoryListingSchema,
  PathResult: pathResultSchema,
  Error: errorBodySchema,
};

function componentSchemas(): JsonObject {
  const schemas: JsonObject = {};
  for (const [name, schema] of Object.entries(REQUEST_SCHEMAS))
    schemas[name] = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
  for (const [name, schema] of Object.entries(RESPONSE_SCHEMAS))
    schemas[name] = z.toJSONSchema(schema, { io: "output", unrepresentable: "any" });
  return schemas;
}

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string): JsonObject => ({ "application/json": { schema: ref(name) } });
const answer = (description: string, content?: JsonObject): JsonObject => ({
  description,
  headers: { [PROTOCOL_HEADER]: { $ref: "#/components/headers/Protocol" } },
  ...(content === undefined ? {} : { content }),
});
const errorAnswer = (description: string): JsonObject => answer(description, json("Error"));

const ERRORS: JsonObject = {
  "400": errorAnswer(
    "invalid_request: malformed input, unknown image, a size no container application covers",
  ),
  "401": errorAnswer("unauthorized: missing or wrong bearer token"),
  "404": errorAnswer("not_found: no such sandbox in this installation, file or route"),
  "500": errorAnswer(
    "invalid_config (the Worker is misconfigured, e.g. its token secret is missing) or internal",
  ),
  "502": errorAnswer(
    "sandbox_failed: the instance did not start, stopped (the sandbox is lost) or an operation inside it failed",
  ),
  "503": errorAnswer(
    "insufficient_capacity: the account is at its instance, memory, vCPU or disk limit",
  ),
};

const parameters = {
  installation: {
    name: INSTALLATION_HEADER,
    in: "header",
    required: true,
    schema: { type: "string" },
    description: "Installation the sandbox belongs to",
  },
  id: {
    name: "id",
    in: "path",
    required: true,
    schema: { type: "string" },
    description: "Caller-chosen sandbox id",
  },
  path: {
    name: "path",
    in: "query",
    required: true,
    schema: { type: "string" },
    description: "Absolute path inside the sandbox",
  },
  recursive: {
    name: "recursive",
    in: "query",
    required: false,
    schema: { type: "boolean", default: false },
  },
  port: {
    name: "port",
    in: "path",
    required: true,
    schema: { type: "integer", minimum: 1024, maximum: 65535 },
  },
  rest: {
    name: "path",
    in: "path",
    required: true,
    schema: { type: "string" },
    description: "Path (and query) sent to the port",
  },
  cursor: {
    name: "cursor",
    in: "query",
    required: false,
    schema: { type: "string" },
    description: "nextCursor of the previous page",
  },
  limit: {
    name: "limit",
    in: "query",
    required: false,
    schema: { type: "integer", minimum: 1, maximum: 100, default: 50 },
  },
};

function operation(summary: string, responses: JsonObject, extra: JsonObject = {}): JsonObject {
  return { summary, ...extra, responses: { ...responses, ...ERRORS } };
}

const unsupportedOperation = (summary: string): JsonObject => ({
  summary,
  parameters: [parameters.installation, parameters.id],
  responses: { "501": errorAnswer("unsupported_operation") },
});

function paths(): JsonObject {
  const sandbox = `${API_PREFIX}/sandboxes/{id}`;
  const scoped = [parameters.installation, parameters.id];
  return {
    [`${API_PREFIX}/info`]: {
      get: operation("Protocol version, capabilities, templates and limits", {
        "200": answer("Info", json("Info")),
      }),
    },
    [`${API_PREFIX}/openapi.json`]: {
      get: operation("This document", { "200": answer("OpenAPI 3.1", { "application/json": {} }) }),
    },
    [`${API_PREFIX}/sandboxes`]: {
      post: operation(
        "Create a sandbox (idempotent by id)",
        {
          "201": answer("Created", json("CreateSandboxResponse")),
          "200": answer("Replay of an earlier create", json("CreateSandboxResponse")),
          "501": errorAnswer("fromSnapshot is not supported"),
        },
        {
          parameters: [parameters.installation],
          requestBody: { required: true, content: json("CreateSandboxRequest") },
        },
      ),
      get: operation(
        "List the installation's sandboxes",
        { "200": answer("A page", json("SandboxList")) },
        { parameters: [parameters.installation, parameters.cursor, parameters.limit] },
      ),
    },
    [sandbox]: {
      get: operation(
        "A sandbox's state",
        { "200": answer("Sandbox", json("Sandbox")) },
        { parameters: scoped },
      ),
      delete: operation(
        "Delete a sandbox; a missing one is success",
        { "200": answer("Deleted (or nothing to delete)", json("DeleteResponse")) },
        { parameters: scoped },
      ),
    },
    [`${sandbox}/ttl`]: {
      put: operation(
        "Set the TTL from now",
        { "200": answer("Sandbox", json("Sandbox")) },
        { parameters: scoped, requestBody: { required: true, content: json("TtlRequest") } },
      ),
    },
    [`${sandbox}/exec`]: {
      post: operation(
        "Run a command to completion",
        { "200": answer("Result", json("ExecResponse")) },
        { parameters: scoped, requestBody: { required: true, content: json("ExecRequest") } },
      ),
    },
    [`${sandbox}/exec/stream`]: {
      post: operation(
        "Run a command, streaming NDJSON lines (stdout, stderr, then exit or error)",
        {
          "200": answer("One StreamLine per line", {
            "application/x-ndjson": { schema: ref("StreamLine") },
          }),
        },
        { parameters: scoped, requestBody: { required: true, content: json("ExecRequest") } },
      ),
    },
    [`${sandbox}/files`]: {
      get: operation(
        "Read a file",
        { "200": answer("The bytes", { "application/octet-stream": {} }) },
        { parameters: [...scoped, parameters.path] },
      ),
      put: operation(
        "Write a file, creating parent directories",
        {
          "200": answer("Written", json("PathResult")),
          "413": errorAnswer("limit_exceeded: larger than maxFileBytes"),
        },
        {
          parameters: [...scoped, parameters.path],
          requestBody: { required: true, content: { "application/octet-stream": {} } },
        },
      ),
      delete: operation(
        "Remove a file, or a tree with recursive=true",
        { "200": answer("Removed", json("PathResult")) },
        { parameters: [...scoped, parameters.path, parameters.recursive] },
      ),
    },
    [`${sandbox}/directories`]: {
      get: operation(
        "List a directory",
        { "200": answer("Entries", json("DirectoryListing")) },
        { parameters: [...scoped, parameters.path, parameters.recursive] },
      ),
      post: operation(
        "Create a directory",
        { "200": answer("Created", json("PathResult")) },
        { parameters: [...scoped, parameters.path, parameters.recursive] },
      ),
    },
    [`${sandbox}/ports/{port}/{path}`]: {
      get: operation(
        "Forward a request (any method, WebSocket upgrades too) to a port of the instance",
        { "200": answer("The port's answer") },
        {
          parameters: [...scoped, parameters.port, parameters.rest],
        },
      ),
    },
    [`${sandbox}/stop`]: {
      post: unsupportedOperation("Not supported: a stopped container loses its disk"),
    },
    [`${sandbox}/start`]: {
      post: unsupportedOperation("Not supported: a stopped container loses its disk"),
    },
    [`${sandbox}/pause`]: { post: unsupportedOperation("Not supported") },
    [`${sandbox}/resume`]: { post: unsupportedOperation("Not supported") },
    [`${sandbox}/snapshots`]: {
      post: unsupportedOperation("Not supported with @cloudflare/sandbox 0.12.10"),
      get: unsupportedOperation("Not supported"),
    },
    [`${sandbox}/fork`]: {
      post: unsupportedOperation("Not supported with @cloudflare/sandbox 0.12.10"),
    },
  };
}

/** The OpenAPI 3.1 document of the adapter protocol this Worker serves. */
export function openApiDocument(): JsonObject {
  return {
    openapi: "3.1.0",
    info: {
      title: "Differently adapter protocol: Cloudflare Sandbox plugin",
      version: String(PROTOCOL_VERSION),
      description: `Every answer carries ${PROTOCOL_HEADER}: ${PROTOCOL_VERSION}. Every route needs Authorization: Bearer <token>. Errors are {code, message, context?} with the contract's codes.`,
    },
    security: [{ bearer: [] }],
    paths: paths(),
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      headers: {
        Protocol: { required: true, schema: { type: "string", const: String(PROTOCOL_VERSION) } },
      },
      schemas: componentSchemas(),
    },
  };
}
