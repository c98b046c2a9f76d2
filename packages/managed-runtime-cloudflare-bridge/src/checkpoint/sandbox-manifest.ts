import { createBridgeFiles } from "../runtime/files.js";
import { shellQuote } from "@open-managed-agents/runtime-resource-contract";
import type { BridgeClient } from "../wire/bridge-client.js";
import { type ManifestEntry, entriesFromSandbox } from "./manifest.js";

/** find(1) expression that prunes one tar-style exclude pattern: a bare name matches any component. */
function pruneExpression(pattern: string): string {
  const trimmed = pattern.replace(/^\.\//, "").replace(/\/+$/, "");
  return trimmed.includes("/") ? `-path ${shellQuote(`./${trimmed}`)}` : `-name ${shellQuote(trimmed)}`;
}

/**
 * Computes the manifest of `/workspace` inside the sandbox: one `find` for types, modes, sizes, mtimes
 * and link targets, one `sha256sum` pass over the regular files. Both land in a scratch folder (excluded)
 * that is fetched with two file GETs and removed.
 */
export async function readSandboxManifest(input: {
  readonly client: BridgeClient;
  readonly sandboxId: string;
  readonly excludes: readonly string[];
  readonly maxRequestBytes: number;
  readonly signal?: AbortSignal;
}): Promise<ManifestEntry[]> {
  const { client, sandboxId, signal } = input;
  const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: input.maxRequestBytes });
  const name = `.oma-manifest-${crypto.randomUUID()}`;
  const directory = `/workspace/${name}`;
  const prune = [`-path ./${name}`, ...input.excludes.map(pruneExpression)].join(" -o ");
  const script = [
    `mkdir -p ${directory}`,
    "cd /workspace",
    `find . -mindepth 1 \\( ${prune} \\) -prune -o -printf '%y %m %s %T@ %P\\0%l\\0' > ${directory}/entries`,
    `find . -mindepth 1 \\( ${prune} \\) -prune -o -type f -print0 | xargs -0 -r sha256sum -z > ${directory}/hashes`,
  ].join(" && ");
  try {
    await files.run(script, signal);
    const listing = new Uint8Array(await new Response(await client.readFile(sandboxId, `${directory}/entries`, signal)).arrayBuffer());
    const hashes = new Uint8Array(await new Response(await client.readFile(sandboxId, `${directory}/hashes`, signal)).arrayBuffer());
    return entriesFromSandbox(listing, hashes);
  } finally {
    await files.run(`rm -rf ${directory}`).catch(() => undefined);
  }
}
