import { UnauthorizedError } from "@open-managed-agents/runtime-resource-contract";

/** The two Web Crypto calls the check needs; workerd's `crypto.subtle` provides both. */
export interface TokenCrypto {
  digest(algorithm: "SHA-256", data: Uint8Array): Promise<ArrayBuffer>;
  timingSafeEqual(a: ArrayBuffer, b: ArrayBuffer): boolean;
}

const BEARER = /^Bearer[ ]+(\S+)[ ]*$/i;
const encoder = new TextEncoder();

/**
 * Checks an `Authorization` header against the expected token in constant time. Both sides are hashed
 * first, so the comparison always runs over 32 bytes whatever the presented token's length, scheme or
 * absence; the presented value never decides how much work is done.
 */
export async function bearerMatches(header: string | null, expected: string, tokenCrypto: TokenCrypto): Promise<boolean> {
  const presented = header === null ? null : (BEARER.exec(header)?.[1] ?? null);
  const [presentedDigest, expectedDigest] = await Promise.all([
    tokenCrypto.digest("SHA-256", encoder.encode(presented ?? "")),
    tokenCrypto.digest("SHA-256", encoder.encode(expected)),
  ]);
  const equal = tokenCrypto.timingSafeEqual(presentedDigest, expectedDigest);
  return equal && presented !== null;
}

/** Throws `unauthorized` unless the request carries `Authorization: Bearer <token>`. */
export async function requireBearer(request: Request, expected: string, tokenCrypto: TokenCrypto): Promise<void> {
  const header = request.headers.get("Authorization");
  if (await bearerMatches(header, expected, tokenCrypto)) return;
  const reason = header === null ? "missing" : BEARER.test(header) ? "wrong token" : "not a Bearer credential";
  throw new UnauthorizedError({ message: `the request is not authorized: ${reason}`, context: { reason } });
}
