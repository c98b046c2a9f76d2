import {
  InvalidRequestError,
  LimitExceededError,
  type ManagedRuntimeProfile,
  NotFoundError,
  managedRuntimeProfileSchema,
  parseRecord,
} from "@open-managed-agents/runtime-resource-contract";
import { readBoundedBytes } from "@open-managed-agents/runtime-utils";
import * as z from "zod";
import { ID_PATTERN } from "../config.js";

/** Largest request body accepted when starting a work item. */
export const MAX_START_BODY_BYTES = 64 * 1024;

const idSchema = z
  .string()
  .regex(
    ID_PATTERN,
    "must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit",
  );
const startBodySchema = z
  .object({
    workId: idSchema.optional(),
    profile: z.union([idSchema, managedRuntimeProfileSchema]),
  })
  .strict();

/** What a start request asks for. */
export interface StartRequest {
  readonly workId: string;
  readonly profile: ManagedRuntimeProfile;
}

/** Checks a session or work id taken from the path. */
export function parseId(value: string, field: "sessionId" | "workId"): string {
  if (!ID_PATTERN.test(value))
    throw new InvalidRequestError({
      message: `${field} must be 1-128 letters, digits, '.', '_' or '-'`,
      context: { field },
    });
  return value;
}

async function readBody(request: Request): Promise<string> {
  const tooLarge = () =>
    new LimitExceededError({
      message: `request body is larger than ${MAX_START_BODY_BYTES} bytes`,
      context: { limit: MAX_START_BODY_BYTES },
    });
  if (Number(request.headers.get("content-length") ?? "0") > MAX_START_BODY_BYTES) throw tooLarge();
  return new TextDecoder().decode(
    await readBoundedBytes(request.body, { maxBytes: MAX_START_BODY_BYTES, tooLarge }),
  );
}

/**
 * Reads `{workId?, profile}`: `profile` is a profile or the name of one in `PROFILES`. A missing work
 * id gets a fresh one. Malformed → `invalid_request`; unknown profile name → `not_found`; too large →
 * `limit_exceeded`.
 */
export async function parseStartRequest(
  request: Request,
  profiles: Readonly<Record<string, ManagedRuntimeProfile>>,
): Promise<StartRequest> {
  const text = await readBody(request);
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch {
    throw new InvalidRequestError({ message: "request body must be a JSON object" });
  }
  const body = parseRecord(startBodySchema, input, {
    record: "start work request",
    code: "invalid_request",
  });
  const workId = body.workId ?? `w-${crypto.randomUUID()}`;
  if (typeof body.profile !== "string") return { workId, profile: body.profile };
  const named = Object.hasOwn(profiles, body.profile) ? profiles[body.profile] : undefined;
  if (named === undefined)
    throw new NotFoundError({
      message: `no profile named "${body.profile}" in PROFILES`,
      context: { profile: body.profile },
    });
  return { workId, profile: named };
}
