import type { IncomingMessage } from "node:http";
import type * as z from "zod";
import { ControlApiError } from "./control-api-error.js";

/** Reads the whole request body, refusing more than `maxBytes` with 413 `PAYLOAD_TOO_LARGE`. */
export async function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(request.headers["content-length"] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    request.resume();
    throw payloadTooLarge(maxBytes);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of request) {
    const buffer = chunk as Buffer;
    total += buffer.length;
    if (total > maxBytes) {
      request.resume();
      throw payloadTooLarge(maxBytes);
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks, total);
}

function payloadTooLarge(maxBytes: number): ControlApiError {
  return new ControlApiError(
    "PAYLOAD_TOO_LARGE",
    413,
    `Request body exceeds the limit of ${maxBytes} bytes`,
    { maxBytes },
  );
}

/** Reads and validates a JSON body; malformed or mismatched input → 400 `VALIDATION_FAILED`. */
export async function readJson<S extends z.ZodType>(
  request: IncomingMessage,
  schema: S,
  maxBytes: number,
): Promise<z.output<S>> {
  const body = await readBody(request, maxBytes);
  let parsed: unknown;
  try {
    parsed = body.length === 0 ? {} : JSON.parse(body.toString("utf8"));
  } catch {
    throw new ControlApiError("VALIDATION_FAILED", 400, "Request body is not valid JSON", {});
  }
  const result = schema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    const field = issue && issue.path.length > 0 ? issue.path.map(String).join(".") : "(body)";
    throw new ControlApiError(
      "VALIDATION_FAILED",
      400,
      `Invalid request: ${field}: ${issue?.message ?? "invalid"}`,
      { field },
    );
  }
  return result.data;
}
