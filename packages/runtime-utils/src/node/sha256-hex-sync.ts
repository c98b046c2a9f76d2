import { createHash } from "node:crypto";

/** Lowercase sha256 hex of a string (as UTF-8) or of bytes, synchronously, through `node:crypto`. */
export function sha256HexSync(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}
