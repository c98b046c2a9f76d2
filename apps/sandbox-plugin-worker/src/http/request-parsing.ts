import {
  InvalidRequestError,
  LimitExceededError,
} from "@open-managed-agents/runtime-resource-contract";
import { readBoundedBytes } from "@open-managed-agents/runtime-utils";
import type * as z from "zod";
import { reportableIssue } from "../protocol/issues.js";

/** Largest JSON request body accepted. */
const MAX_JSON_BYTES = 1_024 * 1_024;

/** Parses `value` with `schema`; failure → `invalid_request` naming the first bad field. */
export function parseWith<T extends z.ZodType>(
  schema: T,
  value: unknown,
  what: string,
): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const { field, message } = reportableIssue(result.error, what);
  throw new InvalidRequestError({
    message: `invalid ${what}: ${field}: ${message}`,
    context: { field },
  });
}

/**
 * Reads a request body into memory, refusing more than `maxBytes` (by Content-Length before reading,
 * and while reading for bodies without one) with `limit_exceeded`.
 */
export async function readBody(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get("Content-Length") ?? Number.NaN);
  const tooLarge = (): LimitExceededError =>
    new LimitExceededError({
      message: `the request body is larger than ${maxBytes} bytes`,
      context: { maxBytes },
    });
  if (declared > maxBytes) throw tooLarge();
  return readBoundedBytes(request.body, { maxBytes, tooLarge });
}

/** Parses a JSON body with `schema`; malformed JSON or a bad shape → `invalid_request`. */
export async function readJson<T extends z.ZodType>(
  request: Request,
  schema: T,
  what: string,
): Promise<z.output<T>> {
  const text = new TextDecoder().decode(await readBody(request, MAX_JSON_BYTES));
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidRequestError({
      message: `invalid ${what}: the body is not JSON`,
      context: { field: what },
    });
  }
  return parseWith(schema, value, what);
}

/** A boolean query flag: absent → false; only `true` and `false` are accepted. */
export function queryFlag(url: URL, name: string): boolean {
  const value = url.searchParams.get(name);
  if (value === null || value === "false") return false;
  if (value === "true") return true;
  throw new InvalidRequestError({
    message: `query parameter ${name} must be true or false`,
    context: { field: name },
  });
}
