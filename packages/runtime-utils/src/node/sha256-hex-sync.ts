import * as crypto from "node:crypto";

type OneShotHash = (algorithm: string, data: string | Uint8Array, encoding: "hex") => string;
// `crypto.hash` (Node ≥ 20.12) skips the Hash object a digest otherwise costs; runtimes without it (workerd's
// node:crypto) take createHash.
const oneShot = (crypto as unknown as { hash?: OneShotHash }).hash;

/** Lowercase sha256 hex of a string (as UTF-8) or of bytes, synchronously, through `node:crypto`. */
export function sha256HexSync(data: string | Uint8Array): string {
  return oneShot
    ? oneShot("sha256", data, "hex")
    : crypto.createHash("sha256").update(data).digest("hex");
}
