import type { BlobStore } from "@open-managed-agents/blob-store";
import { createBlobStoreFromUrl } from "@open-managed-agents/blob-store/url";

/** One `--blob-store <option>=<url>` flag: the factory option path and the store URL. */
export interface BlobStoreFlag {
  /** Dot path into the factory options, e.g. `checkpointStore` or `stores.outputs`. */
  readonly path: readonly string[];
  readonly url: string;
}

const OPTION_PATH = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/;

/** Parses `<option>=<url>`; returns an error text for the usage message instead of throwing. */
export function parseBlobStoreFlag(flag: string): BlobStoreFlag | string {
  const separator = flag.indexOf("=");
  const option = separator > 0 ? flag.slice(0, separator) : "";
  const url = separator > 0 ? flag.slice(separator + 1) : "";
  if (!OPTION_PATH.test(option) || url === "")
    return "--blob-store takes <option>=<url>, e.g. checkpointStore=file:///tmp/openma-blobs";
  return { path: option.split("."), url };
}

/**
 * Opens each flag's store and sets it at its path in a copy of `factoryOptions`, creating nested objects
 * as needed. Two flags with one URL share one store, as a deployment that points both options at one
 * bucket would.
 */
export async function withBlobStores(
  factoryOptions: Readonly<Record<string, unknown>>,
  flags: readonly BlobStoreFlag[],
  env: Readonly<Record<string, string | undefined>>,
): Promise<Record<string, unknown>> {
  const result = structuredClone(factoryOptions) as Record<string, unknown>;
  const opened = new Map<string, BlobStore>();
  for (const { path, url } of flags) {
    const store = opened.get(url) ?? (await createBlobStoreFromUrl(url, { env }));
    opened.set(url, store);
    let target = result;
    for (const key of path.slice(0, -1)) {
      const next = target[key];
      target =
        typeof next === "object" && next !== null && !Array.isArray(next)
          ? (next as Record<string, unknown>)
          : (target[key] = {});
    }
    target[path[path.length - 1] as string] = store;
  }
  return result;
}
