import { randomBytes } from "node:crypto";

/** A prefixed identifier in the platform's style (`work_01…`, `sesn_01…`). */
export function newId(prefix: string): string {
  return `${prefix}_01${randomBytes(12).toString("base64url")}`;
}

/** A bearer credential: 32 random bytes behind a recognizable prefix. */
export function newToken(prefix: string): string {
  return `${prefix}${randomBytes(32).toString("base64url")}`;
}

/** RFC 3339 timestamp of `ms`. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString();
}
