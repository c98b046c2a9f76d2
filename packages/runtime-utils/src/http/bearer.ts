/** The two Web Crypto calls a bearer check needs; workerd's `crypto.subtle` provides both. */
export interface TokenCrypto {
  digest(algorithm: "SHA-256", data: Uint8Array): Promise<ArrayBuffer>;
  timingSafeEqual(a: ArrayBuffer, b: ArrayBuffer): boolean;
}

/** Why a bearer check refused: no header, another scheme, or a token that is not the expected one. */
export type BearerRefusal = "missing" | "not a Bearer credential" | "wrong token";

// RFC 6750: the scheme (any case), spaces, one token of visible ASCII.
const BEARER = /^Bearer[ ]+([\x21-\x7e]+)[ ]*$/i;
const encoder = new TextEncoder();

/** The token of an `Authorization: Bearer <token>` header value, or null when it is absent or another scheme. */
export function bearerCredential(header: string | null): string | null {
  return header === null ? null : (BEARER.exec(header)?.[1] ?? null);
}

/**
 * Checks an `Authorization` header value against the expected token in constant time. Both sides are
 * hashed first, so the comparison always runs over 32 bytes whatever the presented token's length,
 * scheme or absence; the presented value never decides how much work is done.
 */
export async function bearerMatches(
  header: string | null,
  expected: string,
  tokenCrypto: TokenCrypto,
): Promise<boolean> {
  const presented = bearerCredential(header);
  const [presentedDigest, expectedDigest] = await Promise.all([
    tokenCrypto.digest("SHA-256", encoder.encode(presented ?? "")),
    tokenCrypto.digest("SHA-256", encoder.encode(expected)),
  ]);
  const equal = tokenCrypto.timingSafeEqual(presentedDigest, expectedDigest);
  return equal && presented !== null;
}

/** The reason to refuse an `Authorization` header value, or null when it carries the expected token. */
export async function bearerRefusal(
  header: string | null,
  expected: string,
  tokenCrypto: TokenCrypto,
): Promise<BearerRefusal | null> {
  if (await bearerMatches(header, expected, tokenCrypto)) return null;
  return header === null
    ? "missing"
    : bearerCredential(header) === null
      ? "not a Bearer credential"
      : "wrong token";
}
