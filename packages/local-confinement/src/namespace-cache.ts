import { stableJson } from "@open-managed-agents/runtime-utils";
import { type KeptNamespace, createKeptNamespace } from "./namespaces.js";
import { type DirectoryIdentity, normalizeMounts } from "./paths.js";
import type { MappedCommand, MappedProcess, PathMounts } from "./types.js";

/** Kept namespaces of `spawnMapped`, most recently used last. */
const kept = new Map<
  string,
  { readonly namespace: KeptNamespace; readonly idle: NodeJS.Timeout }
>();

/** A kept namespace unused this long is released. */
const IDLE_MS = 60_000;
/** At most this many tables keep a namespace; the least recently used is released first. */
const MAX_KEPT = 64;

/** Runs the command in the namespace kept for this normalized table, keeping one on first use. */
export function spawnInKeptNamespace(
  mounts: PathMounts,
  identities: Readonly<Record<string, DirectoryIdentity>>,
  command: MappedCommand,
): MappedProcess {
  const key = tableKey(mounts);
  let entry = kept.get(key);
  if (entry === undefined) {
    const namespace = createKeptNamespace(mounts, identities);
    // The timer never keeps the server alive; descriptors close with the process anyway.
    const idle = setTimeout(() => release(key), IDLE_MS).unref();
    entry = { namespace, idle };
    if (kept.size >= MAX_KEPT) release(kept.keys().next().value as string);
  } else {
    kept.delete(key);
    entry.idle.refresh();
  }
  kept.set(key, entry);
  return entry.namespace.spawn(command, identities);
}

/**
 * Releases the namespace `spawnMapped` keeps for `mounts`, or every kept namespace when omitted.
 * Running commands keep theirs until they exit. Returns how many were released.
 */
export function releaseMountNamespace(mounts?: PathMounts): number {
  if (mounts !== undefined) return release(tableKey(normalizeMounts(mounts))) ? 1 : 0;
  const keys = [...kept.keys()];
  for (const key of keys) release(key);
  return keys.length;
}

/** Resolves once every kept namespace finished its current setup; for tests and orderly shutdown. */
export async function settleMountNamespaces(): Promise<void> {
  await Promise.all([...kept.values()].map((entry) => entry.namespace.settled()));
}

function release(key: string): boolean {
  const entry = kept.get(key);
  if (entry === undefined) return false;
  kept.delete(key);
  clearTimeout(entry.idle);
  entry.namespace.close();
  return true;
}

function tableKey(mounts: PathMounts): string {
  return stableJson(mounts);
}
