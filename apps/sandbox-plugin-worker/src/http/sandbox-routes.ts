import {
  InvalidRequestError,
  ManagedRuntimeError,
  UnsupportedOperationError,
} from "@open-managed-agents/runtime-resource-contract";
import { resolveSandboxClass } from "../config/class-resolver.js";
import { instanceTypeLabel } from "../config/instance-types.js";
import {
  createSandboxRequestSchema,
  sandboxIdSchema,
  ttlRequestSchema,
  type SandboxView,
} from "../protocol/schemas.js";
import { createFingerprint } from "../sandbox/sandbox-record.js";
import { parseWith, readJson } from "./request-parsing.js";
import { jsonResponse } from "./responses.js";
import type { RouteContext } from "./router.js";
import {
  installationOf,
  locateSandbox,
  registryFor,
  sandboxStub,
  unwrap,
} from "./sandbox-locator.js";

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 100;

function checkTtl(context: RouteContext, ttlSeconds: number): number {
  if (ttlSeconds > context.config.maxTtlSeconds) {
    throw new InvalidRequestError({
      message: `ttlSeconds must be at most ${context.config.maxTtlSeconds}`,
      context: { field: "ttlSeconds", maxTtlSeconds: context.config.maxTtlSeconds },
    });
  }
  return ttlSeconds;
}

/** `POST /sandboxes`: idempotent by id; 201 when this call created the sandbox, 200 for a replay. */
export async function createSandbox(context: RouteContext): Promise<Response> {
  const installation = installationOf(context.request);
  const body = await readJson(context.request, createSandboxRequestSchema, "create request");
  if (body.fromSnapshot !== undefined) {
    throw new UnsupportedOperationError({
      message:
        "starting from a snapshot is not supported: @cloudflare/sandbox 0.12.10 has no container snapshots",
      context: { operation: "create.fromSnapshot" },
    });
  }
  const ttlSeconds = checkTtl(context, body.ttlSeconds ?? context.config.defaultTtlSeconds);
  const sandboxClass = resolveSandboxClass(context.config.classes, body.template.image, body.size);
  const existing = await registryFor(context.env, installation).lookup(body.id);
  if (existing !== null && existing.binding !== sandboxClass.binding) {
    throw new InvalidRequestError({
      message: `sandbox ${body.id} already exists with a different template or size`,
      context: { sandboxId: body.id },
    });
  }
  const fingerprint = await createFingerprint({
    image: body.template.image,
    size: body.size,
    env: body.env,
  });
  const result = unwrap(
    await sandboxStub(context.env, sandboxClass.binding, body.id).provision({
      id: body.id,
      installation,
      image: body.template.image,
      instanceType: instanceTypeLabel(sandboxClass.instanceType),
      binding: sandboxClass.binding,
      env: body.env,
      fingerprint,
      ttlSeconds,
    }),
  );
  return jsonResponse(result.created ? 201 : 200, result);
}

/** `GET /sandboxes`: the installation's registry, a page at a time, with each sandbox's live state. */
export async function listSandboxes(context: RouteContext): Promise<Response> {
  const installation = installationOf(context.request);
  const cursorParam = context.url.searchParams.get("cursor");
  const cursor = cursorParam === null ? null : parseWith(sandboxIdSchema, cursorParam, "cursor");
  const limitParam = context.url.searchParams.get("limit");
  const limit = limitParam === null ? DEFAULT_PAGE_SIZE : Number(limitParam);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw new InvalidRequestError({
      message: `limit must be an integer from 1 to ${MAX_PAGE_SIZE}`,
      context: { field: "limit" },
    });
  }
  const registry = registryFor(context.env, installation);
  const page = await registry.page(cursor, limit);
  const views = await Promise.all(
    page.entries.map(async (entry): Promise<SandboxView | null> => {
      const outcome = await sandboxStub(context.env, entry.binding, entry.id).describeSandbox({
        id: entry.id,
        installation,
      });
      if (outcome.ok) return outcome.value;
      // An entry whose object no longer holds the sandbox (expired meanwhile) is dropped from the registry.
      if (outcome.error.code === "not_found") await registry.remove(entry.id);
      else throw ManagedRuntimeError.fromJSON(outcome.error);
      return null;
    }),
  );
  return jsonResponse(200, {
    sandboxes: views.filter((view): view is SandboxView => view !== null),
    nextCursor: page.nextCursor,
  });
}

/** `GET /sandboxes/{id}`. */
export async function getSandboxView(context: RouteContext): Promise<Response> {
  const { stub, ref } = await locateSandbox(context);
  return jsonResponse(200, unwrap(await stub.describeSandbox(ref)));
}

/** `DELETE /sandboxes/{id}`: destroys instance, state and registry entry; a missing sandbox is success. */
export async function deleteSandbox(context: RouteContext): Promise<Response> {
  const installation = installationOf(context.request);
  const id = parseWith(sandboxIdSchema, context.params.id, "sandbox id");
  const registry = registryFor(context.env, installation);
  const entry = await registry.lookup(id);
  if (entry === null) return jsonResponse(200, { id, deleted: false });
  const result = unwrap(
    await sandboxStub(context.env, entry.binding, id).teardown({ id, installation }),
  );
  if (!result.deleted) await registry.remove(id);
  return jsonResponse(200, { id, deleted: result.deleted });
}

/** `PUT /sandboxes/{id}/ttl`: the sandbox now expires `ttlSeconds` from now. */
export async function updateTtl(context: RouteContext): Promise<Response> {
  const body = await readJson(context.request, ttlRequestSchema, "ttl request");
  const ttlSeconds = checkTtl(context, body.ttlSeconds);
  const { stub, ref } = await locateSandbox(context);
  return jsonResponse(200, unwrap(await stub.setTtl(ref, ttlSeconds)));
}
