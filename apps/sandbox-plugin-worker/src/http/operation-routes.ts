import { execRequestSchema, sandboxPathSchema } from "../protocol/schemas.js";
import { NDJSON_CONTENT_TYPE } from "../protocol/ndjson.js";
import { forwardingRequest, parsePort } from "../sandbox/port-forward.js";
import { parseWith, queryFlag, readBody, readJson } from "./request-parsing.js";
import { jsonResponse } from "./responses.js";
import type { RouteContext } from "./router.js";
import { locateSandbox, unwrap } from "./sandbox-locator.js";

function pathOf(context: RouteContext): string {
  return parseWith(
    sandboxPathSchema,
    context.url.searchParams.get("path") ?? undefined,
    "path query parameter",
  );
}

/** `POST /sandboxes/{id}/exec`: runs argv to completion. */
export async function exec(context: RouteContext): Promise<Response> {
  const request = await readJson(context.request, execRequestSchema, "exec request");
  const { stub, ref } = await locateSandbox(context);
  return jsonResponse(200, unwrap(await stub.runCommand(ref, request)));
}

/** `POST /sandboxes/{id}/exec/stream`: NDJSON lines of stdout, stderr and a final exit (or error). */
export async function execStream(context: RouteContext): Promise<Response> {
  const request = await readJson(context.request, execRequestSchema, "exec request");
  const { stub, ref } = await locateSandbox(context);
  const body = unwrap(await stub.streamCommand(ref, request));
  return new Response(body, {
    status: 200,
    headers: { "Content-Type": NDJSON_CONTENT_TYPE, "Cache-Control": "no-store" },
  });
}

/** `GET /sandboxes/{id}/files?path=`: the file's bytes. */
export async function readFile(context: RouteContext): Promise<Response> {
  const path = pathOf(context);
  const { stub, ref } = await locateSandbox(context);
  const body = unwrap(await stub.readPath(ref, path));
  return new Response(body, {
    status: 200,
    headers: { "Content-Type": "application/octet-stream" },
  });
}

/** `PUT /sandboxes/{id}/files?path=`: writes the body (at most `MAX_FILE_BYTES`), creating parent directories. */
export async function writeFile(context: RouteContext): Promise<Response> {
  const path = pathOf(context);
  const { stub, ref } = await locateSandbox(context);
  const content = await readBody(context.request, context.config.maxFileBytes);
  return jsonResponse(200, unwrap(await stub.writePath(ref, path, content)));
}

/** `DELETE /sandboxes/{id}/files?path=&recursive=`: removes a file, or a tree with `recursive=true`. */
export async function removeFile(context: RouteContext): Promise<Response> {
  const path = pathOf(context);
  const recursive = queryFlag(context.url, "recursive");
  const { stub, ref } = await locateSandbox(context);
  return jsonResponse(200, unwrap(await stub.removePath(ref, path, recursive)));
}

/** `POST /sandboxes/{id}/directories?path=&recursive=`. */
export async function makeDirectory(context: RouteContext): Promise<Response> {
  const path = pathOf(context);
  const recursive = queryFlag(context.url, "recursive");
  const { stub, ref } = await locateSandbox(context);
  return jsonResponse(200, unwrap(await stub.makeDirectory(ref, path, recursive)));
}

/** `GET /sandboxes/{id}/directories?path=&recursive=`. */
export async function listDirectory(context: RouteContext): Promise<Response> {
  const path = pathOf(context);
  const recursive = queryFlag(context.url, "recursive");
  const { stub, ref } = await locateSandbox(context);
  return jsonResponse(200, unwrap(await stub.listDirectory(ref, path, recursive)));
}

/** `* /sandboxes/{id}/ports/{port}/{path}`: the request, minus the plugin's headers, sent to a port of the instance. */
export async function forwardPort(context: RouteContext): Promise<Response> {
  const port = parsePort(context.params.port ?? "");
  const { stub, ref } = await locateSandbox(context);
  const path = `${context.params.rest ?? "/"}${context.url.search}`;
  return stub.fetch(
    forwardingRequest(context.request, {
      sandboxId: ref.id,
      installation: ref.installation,
      port,
      path,
    }),
  );
}
