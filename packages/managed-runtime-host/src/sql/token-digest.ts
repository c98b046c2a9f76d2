import { sha256Hex } from "@open-managed-agents/runtime-utils";

/** Hex SHA-256 of a fence token: what the SQL store keeps instead of the token. */
export function tokenDigest(token: string): Promise<string> {
  return sha256Hex(token);
}
