import { randomBytes, timingSafeEqual, webcrypto } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { type TokenCrypto, bearerRefusal } from "@open-managed-agents/runtime-utils/http";
import { CONTROL_TOKEN_HEADER } from "../protocol.js";
import { ControlApiError } from "./control-api-error.js";

const nodeTokenCrypto: TokenCrypto = {
  digest: (algorithm, data) => webcrypto.subtle.digest(algorithm, data),
  timingSafeEqual: (a, b) => timingSafeEqual(new Uint8Array(a), new Uint8Array(b)),
};

/** A fresh control token: 256 random bits, hex. */
export function createControlToken(): string {
  return randomBytes(32).toString("hex");
}

/**
 * Refuses a request that does not carry `Bearer <token>` in {@link CONTROL_TOKEN_HEADER} (401
 * `UNAUTHORIZED`); the comparison runs in constant time over digests of both sides.
 */
export async function assertControlToken(request: IncomingMessage, token: string): Promise<void> {
  const header = request.headers[CONTROL_TOKEN_HEADER.toLowerCase()];
  const refusal = await bearerRefusal(
    typeof header === "string" ? header : null,
    token,
    nodeTokenCrypto,
  );
  if (refusal !== null) {
    throw new ControlApiError(
      "UNAUTHORIZED",
      401,
      `The local container server answers only its stack: ${CONTROL_TOKEN_HEADER} is ${refusal}`,
      {},
    );
  }
}

/** The header a client of the server sends with every call. */
export function controlTokenHeaders(token: string): Record<string, string> {
  return { [CONTROL_TOKEN_HEADER]: `Bearer ${token}` };
}
