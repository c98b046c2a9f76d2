import { sha256HexSync } from "@open-managed-agents/runtime-utils/node";

/** Key of a session's own namespace in the checkpoint store: its id is hashed, so keys are fixed-length and safe. */
export function sessionKeyOf(sessionId: string): string {
  return sha256HexSync(`oma-bridge-session\0${sessionId}`).slice(0, 32);
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

/** Where a session's pack object (small contents concatenated) with this sha256 lives. */
export function packKeyOf(keyPrefix: string, sessionKey: string, sha256: string): string {
  return `${keyPrefix}/sessions/${sessionKey}/packs/${sha256.slice(0, 2)}/${sha256}`;
}

/** Where a session's pointer to its latest published manifest lives (a hint; the manifest is verified by hash). */
export function latestKeyOf(keyPrefix: string, sessionKey: string): string {
  return `${keyPrefix}/sessions/${sessionKey}/latest.json`;
}
