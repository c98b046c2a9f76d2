const encoder = new TextEncoder();

/** Lowercase hex of bytes. */
export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  return [...(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes))]
    .map((byte) => byte.toString(16).padStart(2, "0"))
    .join("");
}

/**
 * Lowercase sha256 hex of a string (as UTF-8) or of bytes, through Web Crypto (`crypto.subtle`), so
 * it runs in Workers and Node alike. Node code that needs it synchronously uses `sha256HexSync` from `./node`.
 */
export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  return toHex(
    await crypto.subtle.digest("SHA-256", typeof data === "string" ? encoder.encode(data) : data),
  );
}
