import { createHash } from "node:crypto";

/** The four kinds of object a snapshot store holds, each under its session's prefix. */
export type ObjectKind = "snapshots" | "trees" | "packs" | "blobs";

/** A session's folder name in the store: the first 128 bits of the SHA-256 of its id, never the id itself. */
export function sessionKeyOf(sessionId: string): string {
  return createHash("sha256").update(sessionId, "utf8").digest("hex").slice(0, 32);
}

/** Where one session's objects live. Every key is derived here, never read from a stored object. */
export interface SessionKeys {
  readonly session: string;
  readonly prefix: string;
  object(kind: ObjectKind, name: string): string;
  readonly lock: string;
}

export function sessionKeys(keyPrefix: string, session: string): SessionKeys {
  const prefix = `${keyPrefix}/${session}/`;
  return {
    session,
    prefix,
    object: (kind, name) => `${prefix}${kind}/${name}`,
    lock: `${prefix}lock`,
  };
}

export const HEX64 = /^[0-9a-f]{64}$/;
export const HEX32 = /^[0-9a-f]{32}$/;
