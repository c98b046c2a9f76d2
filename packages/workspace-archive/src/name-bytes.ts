import { isUtf8 } from "node:buffer";

/** A lone (unpaired) UTF-16 surrogate: in `u` mode a pair is one code point and does not match. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Why a name or link target cannot be written as the bytes it reads as, or null when it can: tar and the
 * kernel take bytes, so a NUL ends a name early, and a lone surrogate becomes U+FFFD, the same bytes as any
 * other lone surrogate or U+FFFD itself. Checked on the string every check and header uses.
 */
export function nameProblem(text: string): string | null {
  if (text.includes("\0")) return "it contains a NUL byte";
  if (LONE_SURROGATE.test(text))
    return "it contains an unpaired UTF-16 surrogate, which has no UTF-8 bytes";
  return null;
}

/** Whether `bytes` (a name or link target as tar or the kernel holds it) are valid UTF-8. */
export function isUtf8Name(bytes: Uint8Array): boolean {
  return isUtf8(bytes);
}
