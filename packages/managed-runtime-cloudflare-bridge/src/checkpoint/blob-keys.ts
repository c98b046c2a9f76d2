import { createHash } from "node:crypto";

/** Key of a session's own namespace in the checkpoint store: its id is hashed, so keys are fixed-length and safe. */
export function sessionKeyOf(sessionId: string): string {
  return createHash("sha256").update(`oma-bridge-session\0${sessionId}`).digest("hex").slice(0, 32);
}

/** Where a session's content blob with this sha256 lives. */
export function blobKeyOf(keyPrefix: string, sessionKey: string, sha256: string): string {
  return `${keyPrefix}/sessions/${sessionKey}/blobs/${sha256.slice(0, 2)}/${sha256}`;
}

/** Where a session's manifest with this sha256 lives. */
export function manifestKeyOf(keyPrefix: string, sessionKey: string, sha256: string): string {
  return `${keyPrefix}/sessions/${sessionKey}/manifests/${sha256}.json`;
}

/** Prefix under which all blobs of a session live. */
export function blobPrefixOf(keyPrefix: string, sessionKey: string): string {
  return `${keyPrefix}/sessions/${sessionKey}/blobs/`;
}
